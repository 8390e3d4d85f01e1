// Client area, recurring billing: cancelling one's own service (at the end of the paid period, or now) and one's saved
// payment methods (listed, removed). Another customer's service or method answers 404 like one that does not exist.
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../../errors.ts';
import { clientPage, flash, type FlashDeps, type ClientPageDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { ownedService, type OwnedServiceDeps } from './client-routes.ts';

const Params = z.object({ uuid: z.string().max(64) });
const CancelForm = z.object({ when: z.enum(['period_end', 'immediate']), confirm: z.literal('yes') });

/** What the client's service billing routes reach: recurring billing and the owned-service check. */
export type BillingRoutesDeps = ClientPageDeps & FlashDeps & OwnedServiceDeps & Pick<WebDeps, 'recurring'>;

export function billingRoutes(deps: BillingRoutesDeps, area: FastifyInstance): void {
  const recurring = deps.recurring;

  area.post<{ Params: { uuid: string } }>('/services/:uuid/cancel', { schema: { params: Params } }, async (request, reply) => {
    await ownedService(deps, request, request.params.uuid);
    const back = `/client/services/${request.params.uuid}`;
    const form = CancelForm.safeParse(request.body ?? {});
    if (!form.success) {
      flash(deps, reply, 'Choose when the service ends and tick the confirmation.', 'error');
      return reply.redirect(back, 303);
    }
    try {
      const billing = await recurring.cancel(request.params.uuid, form.data.when, 'customer');
      flash(deps, reply, billing.state === 'cancelled' ? 'The service is cancelled and ends today.' : `The service is cancelled: it runs until ${billing.cancel_at} and is not renewed.`);
    } catch (error) {
      if (!(error instanceof HttpError) || error.statusCode >= 500) throw error;
      flash(deps, reply, `The service was not cancelled: ${error.message}`, 'error');
    }
    return reply.redirect(back, 303);
  });

  area.get('/payment-methods', async (request, reply) =>
    clientPage(deps, request, reply, 'payment-methods', { title: 'Payment methods', methods: (await recurring.methods.list(request.customer!.uuid)).map((m) => ({ ...m, saved_on: m.created_at.slice(0, 10) })) }),
  );

  area.post<{ Params: { uuid: string } }>('/payment-methods/:uuid/remove', { schema: { params: Params } }, async (request, reply) => {
    const removed = await recurring.methods.remove(request.customer!.uuid, request.params.uuid);
    flash(deps, reply, `${removed.label} removed: renewals are no longer charged to it.`);
    return reply.redirect('/client/payment-methods', 303);
  });
}
