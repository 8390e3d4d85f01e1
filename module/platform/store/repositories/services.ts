// Services: one customer instance of a product, its service data (secrets sealed), provision status and data.
import { randomUUID } from 'node:crypto';
import type { SecretBox } from '../../../../panel/shared/secret-box.ts';
import { systemClock, type Clock } from '../../../../panel/shared/clock.ts';
import { SECRET_KEY_PATTERN } from '../../../contract/redact.ts';
import type { ProvisionStatus } from '../../../contract/provision-status.ts';
import type { ServiceRepository } from '../../../contract/platform-context.ts';
import type { Db } from '../db.ts';

/** The lifecycle as the store hands it a module's status call. */
interface StatusOwner {
  set(uuid: string, status: ProvisionStatus, reason?: string): Promise<boolean>;
}

/** A stored service; service and provision data come with their secrets opened (for modules only). */
export interface StoredService {
  uuid: string;
  product_uuid: string;
  module_name: string;
  service_data: Record<string, unknown>;
  provision_status: ProvisionStatus;
  status_reason: string | null;
  provision_data: Record<string, unknown>;
  /** The owning customer (column of platform migration 3; absent from records built elsewhere, e.g. the worker API). */
  customer_uuid?: string | null;
  created_at: string;
  updated_at: string;
}

/** A `services` row as stored (the columns `StoredService` is read from). */
export interface ServiceRow extends Omit<StoredService, 'service_data' | 'provision_data' | 'module_name'> {
  module: string;
  service_data: string;
  provision_data: string;
}

/**
 * Repository of the `services` table (the modules' ServiceRepository); secret-named members of service and
 * provision data (at any depth) are sealed at rest with the platform SecretBox.
 */
export class ServiceStore implements ServiceRepository {
  private readonly getStmt;
  private readonly statusStmt;
  private readonly dataStmt;

  constructor(private readonly db: Db, private readonly box: SecretBox, private readonly clock: Clock = systemClock) {
    this.getStmt = db.prepare('SELECT * FROM services WHERE uuid = ?');
    this.statusStmt = db.prepare('UPDATE services SET provision_status = ?, status_reason = ?, updated_at = ? WHERE uuid = ?');
    this.dataStmt = db.prepare('UPDATE services SET provision_data = ?, updated_at = ? WHERE uuid = ?');
  }

  create(input: { product_uuid: string; module_name: string; service_data: Record<string, unknown> }): StoredService {
    const uuid = randomUUID();
    const now = this.clock.now().toISOString();
    this.db
      .prepare(`INSERT INTO services (uuid, product_uuid, module, service_data, provision_status, provision_data, created_at, updated_at)
        VALUES (?, ?, ?, ?, ?, '{}', ?, ?)`)
      .run(uuid, input.product_uuid, input.module_name, this.seal(input.service_data), 'pending', now, now);
    return this.get(uuid)!;
  }

  get(uuid: string): StoredService | null {
    const row = this.getStmt.get(uuid) as ServiceRow | undefined;
    return row ? this.toRecord(row) : null;
  }

  list(filter: { status?: string; product_uuid?: string } = {}): StoredService[] {
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

  /** Who decides provision_status changes (the platform's ServiceLifecycle); set once by the platform. */
  private statusOwner: StatusOwner | null = null;

  /** Hands `setProvisionStatus` calls (a module's, through its context) to the lifecycle. */
  delegateStatusTo(owner: StatusOwner): void {
    this.statusOwner = owner;
  }

  /** The spec's `setProvisionStatus($status)` as modules call it: decided by the lifecycle when one is attached. */
  async setProvisionStatus(uuid: string, status: ProvisionStatus, reason?: string): Promise<void> {
    if (this.statusOwner) await this.statusOwner.set(uuid, status, reason);
    else this.writeProvisionStatus(uuid, status, reason);
  }

  /** The SQL write of provision_status (and its reason); the lifecycle is its one caller in the platform. */
  writeProvisionStatus(uuid: string, status: ProvisionStatus, reason?: string): void {
    this.statusStmt.run(status, reason ?? null, this.clock.now().toISOString(), uuid);
  }

  saveProvisionData(uuid: string, data: Record<string, unknown>): void {
    this.dataStmt.run(this.seal(data), this.clock.now().toISOString(), uuid);
  }

  saveServiceData(uuid: string, data: Record<string, unknown>): void {
    this.db.prepare('UPDATE services SET service_data = ?, updated_at = ? WHERE uuid = ?').run(this.seal(data), this.clock.now().toISOString(), uuid);
  }

  setProduct(uuid: string, productUuid: string): void {
    this.db.prepare('UPDATE services SET product_uuid = ?, updated_at = ? WHERE uuid = ?').run(productUuid, this.clock.now().toISOString(), uuid);
  }

  private seal(data: Record<string, unknown>): string {
    return sealServiceData(this.box, data);
  }

  private toRecord(row: ServiceRow): StoredService {
    return serviceRecord(this.box, row);
  }
}

/** The stored text of service or provision data: JSON with every secret-named member sealed. */
export function sealServiceData(box: SecretBox, data: Record<string, unknown>): string {
  return JSON.stringify(mapSecrets(data, false, (value) => (value === '' ? value : box.seal(value))));
}

/** Service or provision data from its stored text, secrets opened. */
export function openServiceData(box: SecretBox, text: string): Record<string, unknown> {
  return mapSecrets(JSON.parse(text), false, (value) => (value.startsWith('enc:v1:') ? box.open(value) : value)) as Record<string, unknown>;
}

/** A `services` row as modules see it (`module` → `module_name`, data opened). */
export function serviceRecord(box: SecretBox, row: ServiceRow): StoredService {
  const { module, ...rest } = row;
  return { ...rest, module_name: module, service_data: openServiceData(box, row.service_data), provision_data: openServiceData(box, row.provision_data) };
}

/** Copy of `value` with `fn` applied to every string under a secret-named key (at any depth, inside it included). */
function mapSecrets(value: unknown, secret: boolean, fn: (secret: string) => string): unknown {
  if (typeof value === 'string') return secret ? fn(value) : value;
  if (Array.isArray(value)) return value.map((item) => mapSecrets(item, secret, fn));
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mapSecrets(v, secret || SECRET_KEY_PATTERN.test(k), fn)]));
  }
  return value;
}
