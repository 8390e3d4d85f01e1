// Task records in the platform's SQLite database: redacted input for display, sealed raw input for the worker,
// atomic dedupe-on-insert, atomic claims with leases, settlement of attempts and crash recovery.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Database, Statement } from 'better-sqlite3';
import { REDACTED, SECRET_KEY_PATTERN, redact, redactText } from '../contract/redact.ts';
import { SecretBox } from '../../panel/shared/secret-box.ts';
import { systemClock, type Clock } from '../../panel/shared/clock.ts';
import { LOST_WORKER_ERROR, type Settlement } from './attempt.ts';
import { canonicalJson, dedupeKey, normaliseTags } from './canonical.ts';
import { TaskEvents } from './events.ts';
import type { TaskAdded, TaskFilter, TaskOptions, TaskRecord } from './queue.ts';
import { serialTags, SERVICE_TAG_PREFIX } from './tags.ts';
import { BLOCKED, type ClaimedTask, type TaskBackend, type TaskInsert, type TaskRecordStore } from './task-record-store.ts';
import { toRecord, type TaskRow } from './task-schema.ts';

export { migrateTaskStore } from './task-schema.ts';
export type { ClaimedTask, TaskBackend } from './task-record-store.ts';

/** SQL condition on a `tasks` row: an earlier task sharing one of its `service:` tags is still pending or processing. */
const WAITS_FOR_EARLIER = `EXISTS (
  SELECT 1 FROM json_each(tasks.tags) AS mine
    JOIN task_tags AS theirs ON theirs.tag = mine.value
    JOIN tasks AS earlier ON earlier.id = theirs.task_id
  WHERE substr(mine.value, 1, ${SERVICE_TAG_PREFIX.length}) = '${SERVICE_TAG_PREFIX}'
    AND earlier.rowid < tasks.rowid AND earlier.status IN ('pending','processing'))`;

export const INPUT_UNREADABLE_ERROR = 'Task input cannot be opened';
export const SECRET_NEEDS_BOX_ERROR = 'Task input holds secrets but no SecretBox was configured to seal them';

/**
 * Storage of task records. Secrets: the `input` column is always the redacted input (what the platform shows);
 * when the input holds secret-named members, the unredacted input is kept in `raw_input`, sealed with the
 * SecretBox (AES-256-GCM), and only workers open it. Without a SecretBox such input is refused.
 */
export class TaskStore implements TaskRecordStore {
  private readonly pepper: Buffer | undefined;
  /** Statements prepared once per SQL text: claims, settlements, polls and heartbeats run them on every task and tick. */
  private readonly statements = new Map<string, Statement>();
  /**
   * Every change of a record's state made through this store (by a local queue or a remote worker's API call),
   * emitted inside the transaction that made it.
   */
  readonly events = new TaskEvents();

  /** @param clock the time of records (run_at, leases, timestamps); the platform's clock. */
  constructor(private readonly db: Database, private readonly box?: SecretBox, readonly clock: Clock = systemClock) {
    this.pepper = box ? this.loadPepper(box) : undefined;
  }

  /** The clock's time in epoch milliseconds (available_at and lease_until are stored so). */
  now(): number {
    return this.clock.now().getTime();
  }

  private sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) this.statements.set(text, (statement = this.db.prepare(text)));
    return statement;
  }

  /** The HMAC key of dedupe keys: 32 random bytes sealed in task_meta, shared by every process of the data dir. */
  private loadPepper(box: SecretBox): Buffer {
    this.sql('INSERT OR IGNORE INTO task_meta (key, value) VALUES (?, ?)').run('dedupe_pepper', box.seal(randomBytes(32).toString('hex')));
    const row = this.sql('SELECT value FROM task_meta WHERE key = ?').get('dedupe_pepper') as { value: string };
    return Buffer.from(box.open(row.value), 'hex');
  }

  /**
   * Inserts a task; when an identical one (job, queue, input, tag set) is pending or processing and no task of the
   * same service (`service:` tag) was queued since (e.g. `unsuspend` between two `suspend`s), the new record is
   * `duplicate` and names the original. Check and insert share one IMMEDIATE transaction, so concurrent processes
   * on the same file cannot both insert a runnable copy.
   */
  insert(task: TaskInsert): TaskAdded {
    const shown = redact(task.input);
    const shownJson = JSON.stringify(shown);
    const rawJson = JSON.stringify(task.input);
    let sealed: string | null = null;
    if (shownJson !== rawJson) {
      if (!this.box) throw new Error(SECRET_NEEDS_BOX_ERROR);
      sealed = this.box.seal(rawJson);
    }
    const tags = normaliseTags(task.tags);
    const key = dedupeKey(task.job, task.queue, task.input, tags, this.pepper);
    const id = randomUUID();
    const now = this.now();
    const iso = new Date(now).toISOString();
    const run = this.db.transaction((): TaskAdded => {
      const newest = this.sql("SELECT id, rowid AS seq FROM tasks WHERE dedupe_key = ? AND status IN ('pending','processing') ORDER BY rowid DESC LIMIT 1")
        .get(key) as { id: string; seq: number } | undefined;
      // A later task of the same service may have undone what the original does: then this one must run too.
      const serial = serialTags(tags);
      const overtaken = newest !== undefined && serial.length > 0 && this
        .sql('SELECT 1 FROM task_tags JOIN tasks ON tasks.id = task_tags.task_id WHERE task_tags.tag IN (SELECT value FROM json_each(?)) AND tasks.rowid > ? LIMIT 1')
        .get(JSON.stringify(serial), newest.seq) !== undefined;
      const original = overtaken ? undefined : newest;
      const status = original ? 'duplicate' : 'pending';
      const inserted = this
        .sql(
          `INSERT INTO tasks (id, backend, job, queue, input, raw_input, tags, status, options, dedupe_key, duplicate_of,
             available_at, created_at, updated_at, finished_at)
           VALUES (@id, @backend, @job, @queue, @input, @raw, @tags, @status, @options, @key, @dup, @now, @iso, @iso, @finished)
           RETURNING *`,
        )
        .get({
          id, backend: task.backend, job: task.job, queue: task.queue, input: shownJson, raw: sealed, tags: JSON.stringify(tags), status,
          options: canonicalJson(task.options), key, dup: original?.id ?? null, now, iso, finished: original ? iso : null,
        }) as TaskRow;
      const tagInsert = this.sql('INSERT OR IGNORE INTO task_tags (tag, task_id) VALUES (?, ?)');
      for (const tag of tags) tagInsert.run(tag, id);
      if (status === 'pending') this.events.emit({ type: 'queued', task: toRecord(inserted), requeued: false });
      return { id, status };
    });
    return run.immediate();
  }

  get(id: string): TaskRecord | null {
    const row = this.row(id);
    return row ? toRecord(row) : null;
  }

  private row(id: string): TaskRow | undefined {
    return this.sql('SELECT * FROM tasks WHERE id = ?').get(id) as TaskRow | undefined;
  }

  /** Newest first; `tag` uses the tag index (e.g. `service:<uuid>`). */
  list(filter: TaskFilter = {}): TaskRecord[] {
    const where: string[] = [];
    const params: Record<string, unknown> = { limit: filter.limit ?? 100 };
    if (filter.tag !== undefined) {
      where.push('id IN (SELECT task_id FROM task_tags WHERE tag = @tag)');
      params.tag = filter.tag;
    }
    if (filter.status !== undefined) {
      where.push('status = @status');
      params.status = filter.status;
    }
    if (filter.queue !== undefined) {
      where.push('queue = @queue');
      params.queue = filter.queue;
    }
    const sql = `SELECT * FROM tasks ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, rowid DESC LIMIT @limit`;
    return (this.sql(sql).all(params) as TaskRow[]).map(toRecord);
  }

  /** The unredacted input of a record (opens the sealed copy when there is one). */
  rawInput(row: Pick<TaskRow, 'input' | 'raw_input'>): Record<string, unknown> {
    if (row.raw_input === null) return JSON.parse(row.input) as Record<string, unknown>;
    if (!this.box) throw new Error(SECRET_NEEDS_BOX_ERROR);
    return JSON.parse(this.box.open(row.raw_input)) as Record<string, unknown>;
  }

  /** Pairs a claimed row with its raw input; a record whose sealed input cannot be opened fails (null). */
  private claimed(row: TaskRow): ClaimedTask | null {
    try {
      return { record: toRecord(row), rawInput: this.rawInput(row) };
    } catch (error) {
      this.fail(row.id, `${INPUT_UNREADABLE_ERROR}: ${error instanceof Error ? error.message : String(error)}`);
      return null;
    }
  }

  /**
   * Atomically takes the next due `pending` task of `backend` (one UPDATE … RETURNING), leasing it to `workerId`;
   * a task waiting for an earlier one of its service is passed over.
   */
  claimNext(backend: TaskBackend, workerId: string, leaseMs: number, queues?: string[]): ClaimedTask | null {
    const now = this.now();
    // A read first: idle polls then never take the database's write lock.
    const due = this.sql("SELECT 1 FROM tasks WHERE backend = ? AND status = 'pending' AND available_at <= ? LIMIT 1").get(backend, now);
    if (!due) return null;
    const row = this
      .sql(
        `UPDATE tasks SET status = 'processing', attempts = attempts + 1, worker_id = @worker, lease_until = @lease, updated_at = @iso
         WHERE rowid = (SELECT rowid FROM tasks WHERE backend = @backend AND status = 'pending' AND available_at <= @now
                          AND (@queues IS NULL OR queue IN (SELECT value FROM json_each(@queues)))
                          AND NOT ${WAITS_FOR_EARLIER}
                        ORDER BY available_at, rowid LIMIT 1)
           AND status = 'pending'
         RETURNING *`,
      )
      .get({ worker: workerId, lease: now + leaseMs, iso: new Date(now).toISOString(), backend, now, queues: queues ? JSON.stringify(queues) : null }) as
      | TaskRow
      | undefined;
    if (!row) return null;
    return this.claimed(row) ?? this.claimNext(backend, workerId, leaseMs, queues);
  }

  /**
   * Starts an attempt of a record scheduled elsewhere (BullMQ). A record still `processing` means its previous
   * attempt's worker died: that attempt counts as failed, and the task fails when no tries are left.
   * Returns null when the record is gone, already final, or was just failed for want of tries; `blocked` while an
   * earlier task of its service is unfinished.
   */
  beginAttempt(id: string, workerId: string, leaseMs: number): ClaimedTask | typeof BLOCKED | null {
    const run = this.db.transaction((): TaskRow | typeof BLOCKED | null => {
      const row = this.row(id);
      if (!row || (row.status !== 'pending' && row.status !== 'processing')) return null;
      if (this.sql(`SELECT 1 FROM tasks WHERE id = ? AND ${WAITS_FOR_EARLIER}`).get(id)) return BLOCKED;
      const now = this.now();
      const iso = new Date(now).toISOString();
      const options = JSON.parse(row.options) as TaskOptions;
      if (row.status === 'processing' && row.attempts >= options.tries) {
        const failed = this
          .sql("UPDATE tasks SET status = 'failed', last_error = ?, lease_until = NULL, updated_at = ?, finished_at = ? WHERE id = ? RETURNING *")
          .get(LOST_WORKER_ERROR, iso, iso, id) as TaskRow;
        this.events.emitChange(toRecord(failed));
        return null;
      }
      const lost = row.status === 'processing';
      // The previous attempt's worker died with tries left: that attempt failed and this one is its retry.
      if (lost) this.events.emit({ type: 'retrying', task: { ...toRecord(row), status: 'pending', lastError: LOST_WORKER_ERROR }, error: LOST_WORKER_ERROR });
      return this
        .sql(
          `UPDATE tasks SET status = 'processing', attempts = attempts + 1, worker_id = ?, lease_until = ?, updated_at = ?,
             last_error = CASE WHEN ? THEN ? ELSE last_error END WHERE id = ? RETURNING *`,
        )
        .get(workerId, now + leaseMs, iso, lost ? 1 : 0, LOST_WORKER_ERROR, id) as TaskRow;
    });
    const row = run.immediate();
    return row === BLOCKED ? BLOCKED : row ? this.claimed(row) : null;
  }

  /** Applies the outcome of an attempt, only if `workerId` still holds the record. Returns the updated record. */
  settle(id: string, workerId: string, settlement: Settlement): TaskRecord | null {
    const row = this.row(id);
    if (!row) return null;
    const secrets = secretValues(this.rawInput(row));
    const now = this.now();
    const iso = new Date(now).toISOString();
    const run = this.db.transaction((): TaskRecord | null => {
      const updated = this.settleStatement().get({
        id, worker: workerId, status: settlement.status, exceptions: settlement.exceptions,
        error: settlement.lastError === null ? null : redactText(settlement.lastError, secrets),
        result: settlement.status === 'completed' ? JSON.stringify(redact(settlement.result) ?? null) : null,
        available: settlement.availableAt, iso, finished: settlement.status === 'pending' ? null : iso,
      }) as TaskRow | undefined;
      if (!updated) return null;
      const record = toRecord(updated);
      this.events.emitChange(record);
      return record;
    });
    return run.immediate();
  }

  private settleStatement(): Statement {
    return this
      .sql(
        `UPDATE tasks SET status = @status, exceptions = @exceptions, last_error = @error, result = @result,
           available_at = @available, lease_until = NULL, updated_at = @iso, finished_at = @finished
         WHERE id = @id AND status = 'processing' AND worker_id = @worker RETURNING *`,
      );
  }

  /** Extends the leases of every record `workerId` is processing. */
  heartbeat(workerId: string, leaseMs: number): void {
    this.sql("UPDATE tasks SET lease_until = ? WHERE worker_id = ? AND status = 'processing'").run(this.now() + leaseMs, workerId);
  }

  /**
   * Hands back records whose lease expired (their worker crashed) or, with `workerId`+`ids`, the records a stopping
   * worker gives up: each attempt counts as failed; the record goes back to `pending` or, without tries left, `failed`.
   */
  release(backend: TaskBackend, scope: { expired: true } | { workerId: string; ids: string[] }): string[] {
    const now = this.now();
    const iso = new Date(now).toISOString();
    const filter = 'expired' in scope
      ? 'lease_until < @now'
      : 'worker_id = @worker AND id IN (SELECT value FROM json_each(@ids))';
    const run = this.db.transaction(() => {
      const rows = this
        .sql(
          `UPDATE tasks SET
           status = CASE WHEN attempts >= json_extract(options, '$.tries') THEN 'failed' ELSE 'pending' END,
           finished_at = CASE WHEN attempts >= json_extract(options, '$.tries') THEN @iso ELSE NULL END,
           last_error = @error, lease_until = NULL, worker_id = NULL, available_at = @now, updated_at = @iso
         WHERE backend = @backend AND status = 'processing' AND ${filter} RETURNING *`,
        )
        .all({
          now, iso, backend, error: LOST_WORKER_ERROR,
          worker: 'workerId' in scope ? scope.workerId : null, ids: 'ids' in scope ? JSON.stringify(scope.ids) : null,
        }) as TaskRow[];
      for (const row of rows) this.events.emitChange(toRecord(row));
      return rows.map((row) => row.id);
    });
    return run.immediate();
  }

  /** Puts a `failed` record back to `pending` with fresh attempts and exceptions. */
  resetForRetry(id: string, backend: TaskBackend): TaskRecord {
    const now = this.now();
    const iso = new Date(now).toISOString();
    const run = this.db.transaction((): TaskRecord | null => {
      const row = this
        .sql(
          `UPDATE tasks SET status = 'pending', attempts = 0, exceptions = 0, retries = retries + 1, last_error = NULL, result = NULL, backend = ?,
             available_at = ?, lease_until = NULL, worker_id = NULL, updated_at = ?, finished_at = NULL
           WHERE id = ? AND status = 'failed' RETURNING *`,
        )
        .get(backend, now, iso, id) as TaskRow | undefined;
      if (!row) return null;
      const record = toRecord(row);
      this.events.emit({ type: 'queued', task: record, requeued: true });
      return record;
    });
    const record = run.immediate();
    if (!record) throw new Error(this.row(id) ? `Task ${id} is not failed` : `Task ${id} not found`);
    return record;
  }

  /** Fails a non-final record outright (the scheduler lost or refused it). */
  fail(id: string, message: string): TaskRecord | null {
    const iso = this.clock.now().toISOString();
    const run = this.db.transaction((): TaskRecord | null => {
      const row = this
        .sql(
          `UPDATE tasks SET status = 'failed', last_error = ?, lease_until = NULL, updated_at = ?, finished_at = ?
           WHERE id = ? AND status IN ('pending','processing') RETURNING *`,
        )
        .get(message, iso, iso, id) as TaskRow | undefined;
      if (!row) return null;
      const record = toRecord(row);
      this.events.emitChange(record);
      return record;
    });
    return run.immediate();
  }

  stalePending(backend: TaskBackend, olderThan: number, limit: number): TaskRecord[] {
    const rows = this
      .sql("SELECT * FROM tasks WHERE backend = ? AND status = 'pending' AND updated_at < ? ORDER BY updated_at LIMIT ?")
      .all(backend, new Date(olderThan).toISOString(), limit) as TaskRow[];
    return rows.map(toRecord);
  }

  /** Queue names that have runnable records of `backend`. */
  activeQueues(backend: TaskBackend): string[] {
    const rows = this.sql("SELECT DISTINCT queue FROM tasks WHERE backend = ? AND status IN ('pending','processing')").all(backend) as Array<{ queue: string }>;
    return rows.map((row) => row.queue);
  }
}

/** String values of secret-named members anywhere in `input` (used to scrub error texts). */
export function secretValues(input: unknown, out: string[] = []): string[] {
  if (input === null || typeof input !== 'object') return out;
  for (const [key, value] of Object.entries(input as Record<string, unknown>)) {
    if (SECRET_KEY_PATTERN.test(key) && typeof value === 'string' && value !== REDACTED) out.push(value);
    else secretValues(value, out);
  }
  return out;
}
