// Services: one customer instance of a product, its service data (secrets sealed), provision status and data.
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../../../../panel/security/secret-box.ts';
import { SECRET_KEY_PATTERN } from '../../../contract/redact.ts';
import type { Db } from '../db.ts';

export interface ServiceRecord {
  uuid: string;
  product_uuid: string;
  module: string;
  /** Service data with secrets opened (for the module only; never answered to an API client as is). */
  service_data: Record<string, unknown>;
  provision_status: string;
  status_reason: string | null;
  provision_data: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

interface ServiceRow extends Omit<ServiceRecord, 'service_data' | 'provision_data'> {
  service_data: string;
  provision_data: string;
}

/** Repository of the `services` table; secret-named members of service data are sealed at rest. */
export class ServiceStore {
  private readonly getStmt;
  private readonly statusStmt;
  private readonly dataStmt;

  constructor(private readonly db: Db, private readonly box: SecretBox) {
    this.getStmt = db.prepare('SELECT * FROM services WHERE uuid = ?');
    this.statusStmt = db.prepare('UPDATE services SET provision_status = ?, status_reason = ?, updated_at = ? WHERE uuid = ?');
    this.dataStmt = db.prepare('UPDATE services SET provision_data = ?, updated_at = ? WHERE uuid = ?');
  }

  create(input: { product_uuid: string; module: string; service_data: Record<string, unknown>; provision_status?: string }): ServiceRecord {
    const uuid = randomUUID();
    const now = new Date().toISOString();
    this.db
      .prepare(`INSERT INTO services (uuid, product_uuid, module, service_data, provision_status, provision_data, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, '{}', ?, ?)`)
      .run(uuid, input.product_uuid, input.module, this.seal(input.service_data), input.provision_status ?? 'pending', now, now);
    return this.get(uuid)!;
  }

  get(uuid: string): ServiceRecord | null {
    const row = this.getStmt.get(uuid) as ServiceRow | undefined;
    return row ? this.toRecord(row) : null;
  }

  list(filter: { status?: string; product_uuid?: string } = {}): ServiceRecord[] {
    const rows = this.db
      .prepare(`SELECT * FROM services WHERE (@status IS NULL OR provision_status = @status)
        AND (@product IS NULL OR product_uuid = @product) ORDER BY created_at`)
      .all({ status: filter.status ?? null, product: filter.product_uuid ?? null }) as ServiceRow[];
    return rows.map((row) => this.toRecord(row));
  }

  /** Counts services per provision status. */
  countByStatus(): Record<string, number> {
    const rows = this.db.prepare('SELECT provision_status AS s, COUNT(*) AS n FROM services GROUP BY provision_status').all() as Array<{ s: string; n: number }>;
    return Object.fromEntries(rows.map((r) => [r.s, r.n]));
  }

  setStatus(uuid: string, status: string, reason: string | null = null): void {
    this.statusStmt.run(status, reason, new Date().toISOString(), uuid);
  }

  setProvisionData(uuid: string, data: Record<string, unknown>): void {
    this.dataStmt.run(JSON.stringify(data), new Date().toISOString(), uuid);
  }

  setServiceData(uuid: string, data: Record<string, unknown>): void {
    this.db.prepare('UPDATE services SET service_data = ?, updated_at = ? WHERE uuid = ?').run(this.seal(data), new Date().toISOString(), uuid);
  }

  setProduct(uuid: string, productUuid: string): void {
    this.db.prepare('UPDATE services SET product_uuid = ?, updated_at = ? WHERE uuid = ?').run(productUuid, new Date().toISOString(), uuid);
  }

  private seal(data: Record<string, unknown>): string {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(data)) {
      out[key] = SECRET_KEY_PATTERN.test(key) && typeof value === 'string' && value !== '' ? this.box.seal(value) : value;
    }
    return JSON.stringify(out);
  }

  private toRecord(row: ServiceRow): ServiceRecord {
    const sealed = JSON.parse(row.service_data) as Record<string, unknown>;
    const data: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(sealed)) {
      data[key] = typeof value === 'string' && SECRET_KEY_PATTERN.test(key) && value.startsWith('enc:v1:') ? this.box.open(value) : value;
    }
    return { ...row, service_data: data, provision_data: JSON.parse(row.provision_data) as Record<string, unknown> };
  }
}
