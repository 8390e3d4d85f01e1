// Admin service page, recurring billing: cancel a service (at the period end or now) and undo a pending cancellation;
// the billing period itself is shown on the service page (ServiceView.billing).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { HttpError } from '../../errors.ts';
import { PERMISSION } from '../../services/roles.ts';
import { flash, type FlashDeps } from '../render.ts';
import type { WebDeps } from '../web-deps.ts';
import { hasPermission } from './admin-session.ts';

const CancelForm = z.object({ when: z.enum(['period_end', 'immediate']) });
const NextDueForm = z.object({ next_due_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/) });
const ChangePlanForm = z.object({ product_uuid: z.string().min(1).max(64) });

/** What a service's billing actions reach: recurring billing. */
export type ServiceBillingPageDeps = FlashDeps & Pick<WebDeps, 'recurring'>;

export function serviceBillingPage(deps: ServiceBillingPageDeps, app: FastifyInstance): void {
  const recurring = deps.recurring;
  const act = async (uuid: string, reply: Parameters<typeof flash>[1], run: () => Promise<string>) => {
    try {
      flash(deps, reply, await run());
    } catch (error) {
      if (!(error instanceof HttpError) || error.statusCode >= 500) throw error;
      flash(deps, reply, error.message, 'error');
    }
    return reply.redirect(`/admin/services/${uuid}`, 303);
  };

  app.post<{ Params: { uuid: string } }>('/services/:uuid/billing/cancel', async (request, reply) => {
    hasPermission(request, PERMISSION.service_actions);
    const form = CancelForm.safeParse(request.body ?? {});
    return act(request.params.uuid, reply, async () => {
      const billing = await recurring.cancel(request.params.uuid, form.success ? form.data.when : 'period_end', 'admin');
      return billing.state === 'cancelled' ? 'Cancelled now: terminate() queued.' : `Cancelled at the period end: the service ends on ${billing.cancel_at}.`;
    });
  });

  app.post<{ Params: { uuid: string } }>('/services/:uuid/billing/next-due', async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    const form = NextDueForm.safeParse(request.body ?? {});
    return act(request.params.uuid, reply, async () => {
      if (!form.success) throw new HttpError(422, 'Give the new due date as a day (YYYY-MM-DD).');
      const billing = await recurring.setNextDue(request.params.uuid, form.data.next_due_date);
      return `Paid through ${billing.next_due_date} now.`;
    });
  });

  app.post<{ Params: { uuid: string } }>('/services/:uuid/billing/change-plan', async (request, reply) => {
    hasPermission(request, PERMISSION.billing_actions);
    const form = ChangePlanForm.safeParse(request.body ?? {});
    return act(request.params.uuid, reply, async () => {
      if (!form.success) throw new HttpError(422, 'Choose the plan to change to.');
      const answer = await recurring.changePlan(request.params.uuid, form.data.product_uuid);
      return answer.outcome === 'invoiced'
        ? `Plan change invoiced (${answer.proration.balance} ${answer.proration.currency}): it applies once the invoice is paid.`
        : 'Plan changed now; the unused part was credited to the customer.';
    });
  });

  app.post<{ Params: { uuid: string } }>('/services/:uuid/billing/undo-cancel', async (request, reply) => {
    hasPermission(request, PERMISSION.service_actions);
    return act(request.params.uuid, reply, async () => {
      await recurring.undoCancel(request.params.uuid, 'admin');
      return 'Cancellation withdrawn: the service renews again.';
    });
  });
}
