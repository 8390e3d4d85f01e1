// Smtp's own table (scope `module:Notification/Smtp`): every e-mail sent or logged, its attempts and the server's
// reply; the body and attachments sealed until delivered (they may hold a one-time link).
import { randomUUID } from 'node:crypto';
import type Database from 'better-sqlite3';
import type { Clock } from '../../../../panel/shared/clock.ts';
import type { Sealer } from '../../../platform/extension.ts';
import type { Migration } from '../../../platform/store/migrator.ts';

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

/** The `smtp_sends` table (platform process only). */
export class SendStore {
  constructor(private readonly db: Database.Database, private readonly sealer: Sealer, private readonly clock: Clock) {}

  /** Records a mail: `queued` (its body sealed until delivered) or `logged` (no server configured; no body kept). */
  create(input: SendOrigin & { channel_uuid: string | null; recipient: string; subject: string; tries: number } & ({ status: 'queued'; mail: StoredMail } | { status: 'logged' })): SendRecord {
    const uuid = randomUUID();
    const now = this.now();
    const sealed = input.status === 'queued' ? this.sealer.seal(JSON.stringify(input.mail)) : null;
    this.db.prepare(`INSERT INTO smtp_sends (uuid, channel_uuid, event, service_uuid, invoice_uuid, customer_uuid, event_key, recipient, subject,
        status, attempts, tries, mail_sealed, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?)`)
      .run(uuid, input.channel_uuid, input.event ?? null, input.service_uuid ?? null, input.invoice_uuid ?? null, input.customer_uuid ?? null,
        input.event_key ?? null, input.recipient, input.subject, input.status, input.tries, sealed, now, now);
    return this.get(uuid)!;
  }

  get(uuid: string): SendRecord | null {
    const row = this.db.prepare('SELECT * FROM smtp_sends WHERE uuid = ?').get(uuid) as Row | undefined;
    return row ? strip(row) : null;
  }

  /** The send made for an event, if any. */
  byEventKey(key: string): SendRecord | null {
    const row = this.db.prepare('SELECT * FROM smtp_sends WHERE event_key = ?').get(key) as Row | undefined;
    return row ? strip(row) : null;
  }

  /** The sealed body of a queued send, opened; null once delivered or failed. */
  mail(uuid: string): StoredMail | null {
    const row = this.db.prepare('SELECT mail_sealed FROM smtp_sends WHERE uuid = ?').get(uuid) as { mail_sealed: string | null } | undefined;
    return row?.mail_sealed ? (JSON.parse(this.sealer.open(row.mail_sealed)) as StoredMail) : null;
  }

  setTask(uuid: string, taskId: string): void {
    this.db.prepare('UPDATE smtp_sends SET task_id = ? WHERE uuid = ?').run(taskId, uuid);
  }

  /** Counts one delivery attempt; answers the attempt number. */
  beginAttempt(uuid: string): number {
    const row = this.db.prepare('UPDATE smtp_sends SET attempts = attempts + 1, updated_at = ? WHERE uuid = ? RETURNING attempts').get(this.now(), uuid) as { attempts: number } | undefined;
    return row?.attempts ?? 0;
  }

  /** Delivered: the server's reply kept, the body dropped. Once: a repeated report keeps the first. */
  markSent(uuid: string, reply: string): void {
    const now = this.now();
    this.db.prepare("UPDATE smtp_sends SET status = 'sent', server_reply = ?, last_error = NULL, mail_sealed = NULL, updated_at = ?, sent_at = ? WHERE uuid = ? AND status <> 'sent'")
      .run(reply, now, now, uuid);
  }

  /**
   * An attempt failed (`final`: no try left — status `failed`, body dropped). `error` must already be free of secrets.
   * Only a `queued` send changes: a late report never undoes a recorded success.
   */
  markFailure(uuid: string, error: string, final: boolean): void {
    if (final) this.db.prepare("UPDATE smtp_sends SET status = 'failed', last_error = ?, mail_sealed = NULL, updated_at = ? WHERE uuid = ? AND status = 'queued'").run(error, this.now(), uuid);
    else this.db.prepare("UPDATE smtp_sends SET last_error = ?, updated_at = ? WHERE uuid = ? AND status = 'queued'").run(error, this.now(), uuid);
  }

  /** Sends, newest first, optionally of one service or event. */
  list(filter: { service_uuid?: string; event?: string; limit?: number } = {}): SendRecord[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.service_uuid) (where.push('service_uuid = ?'), args.push(filter.service_uuid));
    if (filter.event) (where.push('event = ?'), args.push(filter.event));
    const sql = `SELECT * FROM smtp_sends ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, rowid DESC LIMIT ?`;
    return (this.db.prepare(sql).all(...args, Math.min(filter.limit ?? 100, 1000)) as Row[]).map(strip);
  }

  private now(): string {
    return this.clock.now().toISOString();
  }
}

function strip(row: Row): SendRecord {
  const { mail_sealed: _sealed, ...record } = row;
  return record;
}
