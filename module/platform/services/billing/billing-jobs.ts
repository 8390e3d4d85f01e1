// The billing jobs on the Task queue (queue `billing`, job `BillingJob`): `run` (one billing run, its record in
// billing_runs) and `charge` (the off-session charge of one invoice). They run where the platform database is; a
// remote worker that takes one hands it to the platform over the worker API.
import { z } from 'zod';
import type { TaskAdded, TaskHandler } from '../../../task/queue.ts';
import { Task } from '../../../task/task.ts';

export const BILLING_JOB = 'BillingJob';
const BILLING_QUEUE = 'billing';

export const billingJobInputSchema = z.discriminatedUnion('op', [
  z.object({ op: z.literal('run'), run_id: z.number().int().positive() }),
  z.object({ op: z.literal('charge'), invoice_uuid: z.string().min(1).max(64) }),
]);
export type BillingJobInput = z.infer<typeof billingJobInputSchema>;

/**
 * Queues the run recorded as `runId`. A run is idempotent, so it is tried up to 10 times: a run lost with its process
 * is taken again and goes on where it was (and the schedule queues it again when even those are spent).
 */
export function queueBillingRun(runId: number): Promise<TaskAdded> {
  return Task.dispatch(BILLING_JOB, BILLING_QUEUE, { op: 'run', run_id: runId, tries: 10, backoff: 30, timeout: 1800, maxExceptions: 3 }, ['billing_run']);
}

/** Queues the charge of an invoice (retries use the same gateway idempotency key: one charge). */
export function queueCharge(invoiceUuid: string): Promise<string> {
  return Task.add(BILLING_JOB, BILLING_QUEUE, { op: 'charge', invoice_uuid: invoiceUuid, tries: 3, backoff: 60, timeout: 120, maxExceptions: 3 }, [
    'billing_charge', `invoice:${invoiceUuid}`,
  ]);
}

/** Runs a billing job's input where the database is (the platform's billing); answers the task result. */
export type BillingJobRunner = (input: BillingJobInput, signal: AbortSignal) => Promise<Record<string, unknown>>;

/** A remote worker's runner: the platform runs the job (worker API); a run is asked after until it is finished. */
export function remoteBillingJob(post: (input: BillingJobInput) => Promise<{ finished: boolean; result: Record<string, unknown> }>, pollMs = 1000): BillingJobRunner {
  return async (input, signal) => {
    for (;;) {
      const answer = await post(input);
      if (answer.finished) return answer.result;
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, pollMs);
        signal.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
        }, { once: true });
      });
    }
  };
}

/** The `BillingJob` handler around a runner (local, or the worker API in a remote worker). */
export function billingJobHandler(run: BillingJobRunner): TaskHandler {
  return async (input, ctx) => {
    const parsed = billingJobInputSchema.safeParse(input);
    if (!parsed.success) throw new Error(`BillingJob: invalid input (${parsed.error.issues[0]?.message ?? 'unknown'})`);
    return { status: 'success', ...(await run(parsed.data, ctx.signal)) };
  };
}
