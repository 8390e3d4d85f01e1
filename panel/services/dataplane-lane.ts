// The data-plane lane: one task at a time, except that account changes queued together are committed as one batch.

/** How a task joins the lane. */
export interface LaneOptions {
  /**
   * The task may share a batch with the tasks queued right after it: each runs alone up to its data-plane change
   * ({@link DataplaneLane.park}), the next one starts then, and the parked changes are applied together once no more
   * such task is queued (or the batch is full). Only for tasks whose one data-plane step is a parked change.
   */
  batch?: boolean;
}

interface Entry {
  task: () => unknown;
  batch: boolean;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

interface Parked<C> {
  change: C;
  member: Member;
  resolve(): void;
  reject(err: unknown): void;
}

type Outcome = { ok: true; value: unknown } | { ok: false; err: unknown };

interface Member {
  entry: Entry;
  /** Settles with the task's outcome (never rejects). */
  settled: Promise<Outcome>;
}

/** Thrown into parked tasks when their batch failed: each undoes its store write and is run again alone. */
class BatchRetry extends Error {
  constructor() {
    super('data-plane batch failed; the change is retried alone');
    this.name = 'BatchRetry';
  }
}

/** The most changes one batch carries. */
const MAX_BATCH = 256;

/**
 * Serialises every data-plane task, with group commit for account changes: tasks run one after the other; a run of
 * `batch` tasks queued together is a unit whose store writes still happen one after the other (each task starts
 * once the previous one parked its change or finished), whose parked changes are applied with one `flush` (one
 * call per subsystem and interface), and each of whose tasks resumes (answers) only after that flush. When the flush
 * of several changes fails, the parked tasks are failed in reverse order with an internal retry error (each undoes
 * its own store write, as it does for any data-plane failure) and then run again one by one, unbatched, so each gets
 * the outcome it would have had alone; a batch of one gets the flush's error. A task that did not park keeps its
 * outcome.
 */
export class DataplaneLane<C> {
  private readonly queue: Entry[] = [];
  private pumping = false;
  /** The unit collecting parked changes, while one of its tasks is running. */
  private collecting: { parked: Parked<C>[]; member: Member; onPark: () => void } | null = null;

  constructor(
    private readonly flush: (changes: C[]) => Promise<void>,
    private readonly maxBatch = MAX_BATCH,
  ) {}

  /**
   * Whether the lane is running its tasks now (a task, a batch's flush, or the turn between a batch's tasks). The
   * subsystem writers refuse to write otherwise (see `lane-writers.ts`).
   */
  get active(): boolean {
    return this.pumping;
  }

  /** Runs `task` after every earlier task has settled (or in the current unit, see {@link LaneOptions}). */
  run<T>(task: () => Promise<T> | T, opts: LaneOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ task, batch: opts.batch === true, resolve: resolve as (v: unknown) => void, reject });
      void this.pump();
    });
  }

  /**
   * Inside a `batch` task: parks `change` for its unit's flush and returns the promise the task awaits (settled
   * after the flush, rejected when it failed). Null outside a collecting unit: the caller applies the change itself.
   */
  park(change: C): Promise<void> | null {
    const unit = this.collecting;
    if (!unit) return null;
    return new Promise<void>((resolve, reject) => {
      unit.parked.push({ change, member: unit.member, resolve, reject });
      unit.onPark();
    });
  }

  private async pump(): Promise<void> {
    if (this.pumping) return;
    this.pumping = true;
    try {
      for (let entry = this.queue.shift(); entry; entry = this.queue.shift()) {
        if (entry.batch) await this.runUnit(entry);
        else deliver(entry, await settle(entry));
      }
    } finally {
      this.pumping = false;
    }
  }

  private async runUnit(first: Entry): Promise<void> {
    const parked: Parked<C>[] = [];
    const members: Member[] = [];
    const take = () => (this.queue[0]?.batch && parked.length < this.maxBatch ? this.queue.shift() : undefined);
    // When the queue runs dry, one turn of the event loop lets requests already received join (their bodies parse
    // on the next turns); it costs a request alone nothing it would notice.
    const more = async () => take() ?? (await new Promise((resolve) => setImmediate(resolve)), take());
    for (let entry: Entry | undefined = first; entry; entry = await more()) {
      const member = { entry } as Member;
      let onPark = () => {};
      const parkedNow = new Promise<void>((resolve) => (onPark = resolve));
      this.collecting = { parked, member, onPark };
      member.settled = settle(entry);
      members.push(member);
      // This task's store write is done once it parked its change (or finished without one).
      await Promise.race([member.settled, parkedNow]);
      this.collecting = null;
    }
    const waiting = new Set(parked.map((p) => p.member));
    for (const m of members) if (!waiting.has(m)) deliver(m.entry, await m.settled);
    if (parked.length === 0) return;
    let failure: { err: unknown } | null = null;
    try {
      await this.flush(parked.map((p) => p.change));
    } catch (err) {
      failure = { err };
    }
    if (!failure || parked.length === 1) {
      // One change alone gets the flush's own outcome: a retry would only repeat it.
      for (const p of parked) {
        if (failure) p.reject(failure.err);
        else p.resolve();
      }
      for (const p of parked) deliver(p.member.entry, await p.member.settled);
      return;
    }
    // Undo in reverse order of the store writes, then run each again alone, in the original order, before anything else.
    const retry: Entry[] = [];
    for (const p of [...parked].reverse()) {
      p.reject(new BatchRetry());
      const outcome = await p.member.settled;
      if (!outcome.ok && outcome.err instanceof BatchRetry) retry.unshift({ ...p.member.entry, batch: false });
      else deliver(p.member.entry, outcome);
    }
    this.queue.unshift(...retry);
  }
}

/** Runs a task to its outcome (never rejects). */
async function settle(entry: Entry): Promise<Outcome> {
  try {
    return { ok: true, value: await entry.task() };
  } catch (err) {
    return { ok: false, err };
  }
}

function deliver(entry: Entry, outcome: Outcome): void {
  if (outcome.ok) entry.resolve(outcome.value);
  else entry.reject(outcome.err);
}
