// One attempt of a task: run the handler under a timeout AbortSignal, classify the outcome, decide what follows.
import type { TaskHandler, TaskOptions } from './queue.ts';

/** How an attempt ended. A returned `{status:'error'}` is a failure but not an exception; a timeout neither. */
export type AttemptOutcome =
  | { kind: 'completed'; result: unknown }
  | { kind: 'failed'; message: string; exception: boolean }
  /** The worker stopped (or shut down) before the handler settled: handled like a lost worker. */
  | { kind: 'stopped'; message: string };

export const LOST_WORKER_ERROR = 'Worker lost during the attempt (process stopped or lease expired)';
const STOPPED_WORKER_ERROR = 'Worker stopped during the attempt';
export const UNKNOWN_ERROR = 'Unknown error';

/** Text of the failure of an attempt that ran out of time. */
export function timeoutMessage(seconds: number): string {
  return `Task attempt timed out after ${seconds} s`;
}

class AttemptAbort extends Error {
  constructor(message: string, readonly stopped: boolean) {
    super(message);
  }
}

/**
 * Runs `handler` once. The handler's signal aborts when `options.timeout` seconds pass or `stopSignal` aborts;
 * the attempt then ends at once (a handler that ignores its signal keeps running detached, its result ignored).
 */
export async function runAttempt(
  handler: TaskHandler,
  input: Record<string, unknown>,
  ctx: { taskId: string; attempt: number; timeout: number; stopSignal?: AbortSignal; options?: TaskOptions; exceptions?: number },
): Promise<AttemptOutcome> {
  const controller = new AbortController();
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(controller.signal.reason);
    controller.signal.addEventListener('abort', onAbort, { once: true });
  });
  aborted.catch(() => undefined);
  const timer = setTimeout(() => controller.abort(new AttemptAbort(timeoutMessage(ctx.timeout), false)), ctx.timeout * 1000);
  const onStop = () => controller.abort(new AttemptAbort(STOPPED_WORKER_ERROR, true));
  if (ctx.stopSignal?.aborted) onStop();
  else ctx.stopSignal?.addEventListener('abort', onStop, { once: true });
  try {
    const run = Promise.resolve().then(() => handler(input, {
      taskId: ctx.taskId, attempt: ctx.attempt, signal: controller.signal, options: ctx.options, exceptions: ctx.exceptions,
    }));
    run.catch(() => undefined);
    const result = await Promise.race([run, aborted]);
    if (controller.signal.aborted) return abortOutcome(controller.signal.reason);
    return classifyResult(result);
  } catch (error) {
    if (error instanceof AttemptAbort) return abortOutcome(error);
    if (controller.signal.aborted && controller.signal.reason instanceof AttemptAbort) return abortOutcome(controller.signal.reason);
    return { kind: 'failed', message: errorText(error), exception: true };
  } finally {
    clearTimeout(timer);
    ctx.stopSignal?.removeEventListener('abort', onStop);
    if (onAbort) controller.signal.removeEventListener('abort', onAbort);
  }
}

function abortOutcome(reason: unknown): AttemptOutcome {
  const abort = reason as AttemptAbort;
  return abort.stopped ? { kind: 'stopped', message: abort.message } : { kind: 'failed', message: abort.message, exception: false };
}

/** A result `{status:'error', message}` fails the attempt; anything else completes the task. */
export function classifyResult(result: unknown): AttemptOutcome {
  if (result !== null && typeof result === 'object' && (result as { status?: unknown }).status === 'error') {
    const message = (result as { message?: unknown }).message;
    const text = typeof message === 'string' && message !== '' ? message : message == null ? UNKNOWN_ERROR : JSON.stringify(message);
    return { kind: 'failed', message: text, exception: false };
  }
  return { kind: 'completed', result: result === undefined ? null : result };
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return typeof error === 'string' && error !== '' ? error : UNKNOWN_ERROR;
}

/** What the record becomes after an attempt. */
export interface Settlement {
  status: 'completed' | 'failed' | 'pending';
  exceptions: number;
  lastError: string | null;
  result: unknown;
  /** Epoch ms at which a `pending` task may run again (now + backoff). */
  availableAt: number;
}

/**
 * The retry policy: complete on success; otherwise fail when the exceptions reach `maxExceptions` (a thrown
 * error only) or the attempts reach `tries`; else back to `pending` after `backoff` seconds.
 */
export function decide(
  state: { attempts: number; exceptions: number; options: TaskOptions },
  outcome: Exclude<AttemptOutcome, { kind: 'stopped' }>,
  now: number,
): Settlement {
  if (outcome.kind === 'completed') {
    return { status: 'completed', exceptions: state.exceptions, lastError: null, result: outcome.result, availableAt: now };
  }
  const exceptions = state.exceptions + (outcome.exception ? 1 : 0);
  const exhausted = (outcome.exception && exceptions >= state.options.maxExceptions) || state.attempts >= state.options.tries;
  return {
    status: exhausted ? 'failed' : 'pending',
    exceptions,
    lastError: outcome.message,
    result: null,
    availableAt: exhausted ? now : now + Math.round(state.options.backoff * 1000),
  };
}
