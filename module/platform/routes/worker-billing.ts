// Worker API of billing: a remote worker hands the billing job it took (a run, a charge) to the platform, which holds
// the database; a run goes on in the background and the worker asks again until it is finished.
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { billingJobInputSchema } from '../services/billing/billing-jobs.ts';
import type { RecurringBilling } from '../services/billing/recurring-billing.ts';

/** `POST /api/worker/billing/jobs` → `{finished, result}`. */
export const workerBillingRoutes = (recurring: RecurringBilling): FastifyPluginAsyncZod => async (app) => {
  app.post('/billing/jobs', { schema: { body: billingJobInputSchema } }, async (request) => recurring.remoteJob(request.body));
};
