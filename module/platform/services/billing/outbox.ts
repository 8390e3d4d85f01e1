// The billing outbox: decisions are written in the transaction that makes them (events to emit, service actions and
// charges to queue, each under a once-key) and carried out afterwards by the dispatcher, at least once — a process
// that dies after the commit leaves them to the next drain; listeners and actions are idempotent per key (the e-mail
// module keys its sends by event, the queue drops a task identical to a pending one, the jobs are idempotent).
import type { Logger } from 'pino';
import type { HookEventName, HookEvents, Hooks } from '../../../../hooks.ts';
import type { Clock } from '../../../../shared/clock.ts';
import type { BillingOutboxQueries, NewOutboxRow, OutboxRow } from '../../store/query/repositories/billing-outbox.ts';

/** The actions the outbox carries: a lifecycle action of a service, an off-session charge of an invoice. */
export type OutboxAction =
  | { name: 'service_action'; payload: { service_uuid: string; action: 'create' | 'suspend' | 'unsuspend' | 'termination' | 'change_package'; product_uuid?: string } }
  | { name: 'charge'; payload: { invoice_uuid: string } };

/** Writes outbox rows (call inside the deciding transaction). */
export class BillingOutbox {
  constructor(private readonly repo: BillingOutboxQueries, private readonly clock: Clock) {}

  /** An event to emit once per `key`; `at` (the event time, part of its identity) is set now unless given. */
  event<E extends HookEventName>(name: E, payload: Partial<HookEvents[E]>, key: string): Promise<boolean> {
    return this.write([this.eventRow(name, payload, key)]).then((added) => added === 1);
  }

  /** An action to run once per `key` (and per service action: a suspend and a later terminate of one invoice are two). */
  action(action: OutboxAction, key: string): Promise<boolean> {
    return this.write([this.actionRow(action, key)]).then((added) => added === 1);
  }

  /** The row `event` writes, for writing many at once with `write`. */
  eventRow<E extends HookEventName>(name: E, payload: Partial<HookEvents[E]>, key: string): NewOutboxRow {
    const at = this.clock.now().toISOString();
    return { kind: 'event', name, payload: { at, ...payload }, once_key: `${name}:${key}`, created_at: at };
  }

  /** The row `action` writes, for writing many at once with `write`. */
  actionRow(action: OutboxAction, key: string): NewOutboxRow {
    const kind = action.name === 'service_action' ? `${action.name}:${action.payload.action}` : action.name;
    return { kind: 'action', name: action.name, payload: action.payload, once_key: `action:${kind}:${key}`, created_at: this.clock.now().toISOString() };
  }

  /** Writes rows in their order (one statement per 500), each once per its key; answers how many were new. */
  write(rows: readonly NewOutboxRow[]): Promise<number> {
    return this.repo.addMany(rows);
  }
}

export interface DispatcherDeps {
  repo: BillingOutboxQueries;
  hooks: Hooks;
  clock: Clock;
  logger: Logger;
  /** The full payload of an event whose stored payload names an invoice (the invoice's members under the stored ones). */
  complete(payload: Record<string, unknown>): Promise<Record<string, unknown>>;
  /** Carries out an action; throws (or rejects) to have it tried again later. */
  act(action: OutboxAction): Promise<void>;
}

/** Rows claimed per round, the lease of a claim (a process that dies leaves its rows to others after it), tries of a failing row. */
const BATCH = 50;
const LEASE_MS = 15_000;
const MAX_ATTEMPTS = 10;

/** Carries out the outbox: one drain at a time per process; `kick` starts one (or asks the running one to go on). */
export class OutboxDispatcher {
  private running: Promise<number> | null = null;
  private again = false;
  private closed = false;

  constructor(private readonly deps: DispatcherDeps) {}

  /** Starts a drain in the background (errors are logged). */
  kick(): void {
    void this.drain().catch((error: unknown) => this.deps.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'billing outbox drain failed'));
  }

  /** Handles every claimable row, also those added while it runs; resolves with how many were handled. */
  drain(): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    if (this.running) {
      this.again = true;
      return this.running;
    }
    // `finally` runs after the assignment even when the loop ends without awaiting anything.
    this.running = this.loop().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private async loop(): Promise<number> {
    let handled = 0;
    do {
      this.again = false;
      while (!this.closed) {
        const rows = await this.deps.repo.claim(BATCH, this.deps.clock.now().getTime(), LEASE_MS);
        if (rows.length === 0) break;
        handled += await this.handle(rows);
      }
    } while (this.again && !this.closed);
    return handled;
  }

  /** Takes no more work and waits for the drain running (shutdown: what is left stays for the next start). */
  async close(): Promise<void> {
    this.closed = true;
    await this.running?.catch(() => undefined);
  }

  private async handle(rows: OutboxRow[]): Promise<number> {
    const done: number[] = [];
    for (const row of rows) {
      try {
        if (row.kind === 'event') await this.deps.hooks.emit(row.name as HookEventName, (await this.deps.complete(row.payload)) as never);
        else await this.deps.act({ name: row.name, payload: row.payload } as OutboxAction);
        done.push(row.id);
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        const final = row.attempts >= MAX_ATTEMPTS;
        const now = this.deps.clock.now();
        await this.deps.repo.failed(row.id, message, now.getTime() + Math.min(3_600_000, 30_000 * row.attempts), final, now.toISOString());
        this.deps.logger.error({ outbox: row.once_key, attempt: row.attempts, final, err: message }, 'billing outbox row failed');
      }
    }
    await this.deps.repo.done(done, this.deps.clock.now().toISOString());
    return done.length;
  }
}
