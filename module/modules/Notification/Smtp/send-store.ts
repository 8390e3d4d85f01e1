// Smtp's own table (scope `module:Notification/Smtp`): every e-mail sent or logged, its attempts and the server's
// reply; the body and attachments sealed until delivered (they may hold a one-time link). One send per event key: the
// insert is conditional on the key, so of two processes recording the same event's mail one records it.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../../../shared/clock.ts';
import type { Sealer } from '../../../platform/extension.ts';
import type { Migration } from '../../../platform/store/migrator.ts';
import type { ModuleStore } from '../../../platform/store/query/module-store.ts';
import { CompiledStatement } from '../../../store-kernel/compiled-statement.ts';
import type { Kysely } from 'kysely';

export const SMTP_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'sends',
    up: `CREATE TABLE smtp_sends (
        uuid TEXT PRIMARY KEY,
        channel_uuid TEXT,
        event TEXT,
        service_uuid TEXT,
        invoice_uuid TEXT,
        customer_uuid TEXT,
        recipient TEXT NOT NULL,
        subject TEXT NOT NULL,
        status TEXT NOT NULL CHECK (status IN ('queued', 'sent', 'failed', 'logged')),
        attempts INTEGER NOT NULL DEFAULT 0,
        tries INTEGER NOT NULL,
        task_id TEXT,
        server_reply TEXT,
        last_error TEXT,
        mail_sealed TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        sent_at TEXT
      );
      CREATE INDEX smtp_sends_service ON smtp_sends (service_uuid, created_at);
      CREATE INDEX smtp_sends_status ON smtp_sends (status, created_at);`,
  },
  {
    version: 2,
    name: 'sends-event-key',
    // One mail per platform event: a message job run twice (a retried or taken-over attempt) finds its send.
    up: `ALTER TABLE smtp_sends ADD COLUMN event_key TEXT;
      CREATE UNIQUE INDEX smtp_sends_event_key ON smtp_sends (event_key) WHERE event_key IS NOT NULL;`,
  },
];

export type SendStatus = 'queued' | 'sent' | 'failed' | 'logged';

/** What a send is about (set when a platform event caused it). */
export interface SendOrigin {
  event?: string | null;
  service_uuid?: string | null;
  invoice_uuid?: string | null;
  customer_uuid?: string | null;
  /** Identity of the causing event (name, time, subject): at most one send per key. */
  event_key?: string | null;
}

/** The body of a queued mail (sealed at rest). */
export interface StoredMail {
  text: string;
  html: string;
  attachments: Array<{ filename: string; content_base64: string; contentType?: string }>;
}

/** One recorded send, without its sealed body. */
export interface SendRecord {
  uuid: string;
  channel_uuid: string | null;
  event: string | null;
  service_uuid: string | null;
  invoice_uuid: string | null;
  customer_uuid: string | null;
  event_key: string | null;
  recipient: string;
  subject: string;
  status: SendStatus;
  attempts: number;
  tries: number;
  task_id: string | null;
  server_reply: string | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
  sent_at: string | null;
}

type Row = SendRecord & { mail_sealed: string | null };

/** The `smtp_sends` table as the module store types it. */
export interface SendTables {
  smtp_sends: Row;
}

/** What a new mail's record is: its fields, and `queued` (with its body) or `logged`. */
export type NewSend = SendOrigin & { channel_uuid: string | null; recipient: string; subject: string; tries: number } & ({ status: 'queued'; mail: StoredMail } | { status: 'logged' });

/** The send of an event key (every message job reads it: compiled once). */
const SEND_BY_EVENT_KEY = new CompiledStatement<{ key: string }, Row>((store, v) =>
  (store.db as Kysely<SendTables>).selectFrom('smtp_sends').selectAll().where('event_key', '=', v.key));

/** The `smtp_sends` table (platform process only). */
export class SendStore {
  constructor(private readonly store: ModuleStore<SendTables>, private readonly sealer: Sealer, private readonly clock: Clock) {}

  /**
   * Records a mail: `queued` (its body sealed until delivered) or `logged` (no server configured; no body kept).
   * With an `event_key` the insert is conditional: when a send of that key exists (recorded by any process), nothing is
   * written and that send is answered with `created: false`.
   */
  async create(input: NewSend): Promise<{ record: SendRecord; created: boolean }> {
    const uuid = randomUUID();
    const now = this.now();
    const row: Row = {
      uuid, channel_uuid: input.channel_uuid, event: input.event ?? null, service_uuid: input.service_uuid ?? null, invoice_uuid: input.invoice_uuid ?? null,
      customer_uuid: input.customer_uuid ?? null, event_key: input.event_key ?? null, recipient: input.recipient, subject: input.subject,
      status: input.status, attempts: 0, tries: input.tries, task_id: null, server_reply: null, last_error: null,
      mail_sealed: input.status === 'queued' ? this.sealer.seal(JSON.stringify(input.mail)) : null, created_at: now, updated_at: now, sent_at: null,
    };
    const inserted = await this.store.db.insertInto('smtp_sends').values(row)
      .onConflict((oc) => oc.column('event_key').where('event_key', 'is not', null).doNothing())
      .returning('uuid').executeTakeFirst();
    if (inserted) return { record: (await this.get(uuid))!, created: true };
    const earlier = input.event_key ? await this.byEventKey(input.event_key) : null;
    if (!earlier) throw new Error(`smtp_sends: send ${uuid} was not recorded`);
    return { record: earlier, created: false };
  }

  async get(uuid: string): Promise<SendRecord | null> {
    const row = await this.store.db.selectFrom('smtp_sends').selectAll().where('uuid', '=', uuid).executeTakeFirst();
    return row ? strip(row) : null;
  }

  /** The send made for an event, if any. */
  async byEventKey(key: string): Promise<SendRecord | null> {
    const row = await SEND_BY_EVENT_KEY.first(this.store, { key });
    return row ? strip(row) : null;
  }

  /** The sealed body of a queued send, opened; null once delivered or failed. */
  async mail(uuid: string): Promise<StoredMail | null> {
    const row = await this.store.db.selectFrom('smtp_sends').select('mail_sealed').where('uuid', '=', uuid).executeTakeFirst();
    return row?.mail_sealed ? (JSON.parse(this.sealer.open(row.mail_sealed)) as StoredMail) : null;
  }

  async setTask(uuid: string, taskId: string): Promise<void> {
    await this.store.db.updateTable('smtp_sends').set({ task_id: taskId }).where('uuid', '=', uuid).execute();
  }

  /** Counts one delivery attempt; answers the attempt number. */
  async beginAttempt(uuid: string): Promise<number> {
    const row = await this.store.db.updateTable('smtp_sends').set((eb) => ({ attempts: eb('attempts', '+', 1), updated_at: this.now() }))
      .where('uuid', '=', uuid).returning('attempts').executeTakeFirst();
    return Number(row?.attempts ?? 0);
  }

  /** Delivered: the server's reply kept, the body dropped. Once: a repeated report keeps the first. */
  async markSent(uuid: string, reply: string): Promise<void> {
    const now = this.now();
    await this.store.db.updateTable('smtp_sends').set({ status: 'sent', server_reply: reply, last_error: null, mail_sealed: null, updated_at: now, sent_at: now })
      .where('uuid', '=', uuid).where('status', '<>', 'sent').execute();
  }

  /**
   * An attempt failed (`final`: no try left — status `failed`, body dropped). `error` must already be free of secrets.
   * Only a `queued` send changes: a late report never undoes a recorded success.
   */
  async markFailure(uuid: string, error: string, final: boolean): Promise<void> {
    const set = final ? { status: 'failed' as const, last_error: error, mail_sealed: null, updated_at: this.now() } : { last_error: error, updated_at: this.now() };
    await this.store.db.updateTable('smtp_sends').set(set).where('uuid', '=', uuid).where('status', '=', 'queued').execute();
  }

  /** Sends, newest first, optionally of one service or event. */
  async list(filter: { service_uuid?: string; event?: string; limit?: number } = {}): Promise<SendRecord[]> {
    let query = this.store.db.selectFrom('smtp_sends').selectAll();
    if (filter.service_uuid) query = query.where('service_uuid', '=', filter.service_uuid);
    if (filter.event) query = query.where('event', '=', filter.event);
    const rows = await query.orderBy('created_at', 'desc').orderBy('uuid', 'desc').limit(Math.min(filter.limit ?? 100, 1000)).execute();
    return rows.map(strip);
  }

  private now(): string {
    return this.clock.now().toISOString();
  }
}

function strip(row: Row): SendRecord {
  const { mail_sealed: _sealed, ...record } = row;
  return record;
}
