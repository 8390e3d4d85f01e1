// `services` over the query layer (either engine): one customer instance of a product, its service data, provision
// status and data (secret-named members of service and provision data sealed at rest with the platform SecretBox),
// plus the admin list's filtered page.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type Selectable } from 'kysely';
import type { SecretBox } from '../../../../../shared/secret-box.ts';
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { ProvisionStatus } from '../../../../contract/provision-status.ts';
import type { PageQuery, ServiceFilter } from '../../paged-query.ts';
import { SECRET_KEY_PATTERN } from '../../../../contract/redact.ts';
import { CompiledStatement, type StatementStore } from '../../../../store-kernel/compiled-statement.ts';
import { lockedRows } from '../../../../store-kernel/row-locks.ts';
import type { ServiceRepository } from '../../../../contract/platform-context.ts';
import type { LifecycleService, StatusStore } from '../../../services/lifecycle.ts';
import type { QueryStore } from '../query-store.ts';
import type { ProductsTable, StoreTables } from '../tables.ts';
import { CompiledRead } from './compiled-read.ts';

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

/** Filters and page of the admin services list (`q`: a substring of the uuid, the username or the status reason). */
export type ServicePageQuery = ServiceFilter & PageQuery & { q?: string };

/** The services table of a statement's store. */
const servicesOf = (store: StatementStore) => store.db as Kysely<StoreTables>;

/** What the lifecycle reads before a status change, the row locked (see getForStatusChange). */
const STATUS_FOR_CHANGE = new CompiledStatement<{ uuid: string }, LifecycleService>((store, v) =>
  lockedRows(store.engine, servicesOf(store).selectFrom('services').select(['uuid', 'product_uuid', 'provision_status']).where('uuid', '=', v.uuid)));

type StatusWrite = { uuid: string; status: ProvisionStatus; reason: string | null; at: string };

function writeStatus(store: StatementStore, v: StatusWrite) {
  return servicesOf(store).updateTable('services').set({ provision_status: v.status, status_reason: v.reason, updated_at: v.at }).where('uuid', '=', v.uuid);
}

const WRITE_STATUS = new CompiledStatement<StatusWrite, never>(writeStatus);
/** The same, only while the status is still `from`. */
const WRITE_STATUS_FROM = new CompiledStatement<StatusWrite & { from: ProvisionStatus }, never>((store, v) =>
  writeStatus(store, v).where('provision_status', '=', v.from));

/** The product columns `WITH_PRODUCT` reads beside the service's, each as `product__<column>` (no service column's name). */
const PRODUCT_COLUMNS = ['uuid', 'module', 'product_data', 'name', 'description', 'position', 'visible', 'created_at', 'updated_at'] as const;

type ProductColumn = (typeof PRODUCT_COLUMNS)[number];

/** Every column of `products` is in PRODUCT_COLUMNS (a column added to the table and not to the list fails to compile). */
const EVERY_PRODUCT_COLUMN: Exclude<keyof ProductsTable, ProductColumn> extends never ? true : never = true;
void EVERY_PRODUCT_COLUMN;

/** A service row with its product's columns (null without a product row). */
type ServiceWithProductRow = ServiceRow & { [C in ProductColumn as `product__${C}`]: Selectable<ProductsTable>[C] | null };

/** A service and its product in one read (an action or job attempt binds its module to both). */
const WITH_PRODUCT = new CompiledStatement<{ uuid: string }, ServiceWithProductRow>((store, v) => servicesOf(store)
  .selectFrom('services as s').leftJoin('products as p', 'p.uuid', 's.product_uuid').selectAll('s')
  .select(PRODUCT_COLUMNS.map((column) => `p.${column} as product__${column}` as const))
  .where('s.uuid', '=', v.uuid) as never);

const SAVE_PROVISION_DATA = new CompiledStatement<{ uuid: string; data: string; at: string }, never>((store, v) =>
  servicesOf(store).updateTable('services').set({ provision_data: v.data, updated_at: v.at }).where('uuid', '=', v.uuid));

/** Repository of `services`. The provision status is written here only by the lifecycle (`writeProvisionStatus`). */
export class ServiceQueries {
  /** `get`'s read, compiled once (modules read their service on every client-area tab). */
  private readonly byUuid: CompiledRead<ServiceRow>;

  constructor(private readonly store: QueryStore, private readonly box: SecretBox, private readonly clock: Clock = systemClock) {
    this.byUuid = new CompiledRead(store, (uuid) => store.db.selectFrom('services').selectAll().where('uuid', '=', uuid) as never);
  }

  async create(input: { product_uuid: string; module_name: string; service_data: Record<string, unknown> }): Promise<StoredService> {
    const uuid = randomUUID();
    const now = this.clock.now().toISOString();
    await this.store.db.insertInto('services').values({
      uuid, product_uuid: input.product_uuid, module: input.module_name, service_data: sealServiceData(this.box, input.service_data),
      provision_status: 'pending', status_reason: null, provision_data: '{}', customer_uuid: null, created_at: now, updated_at: now,
    }).execute();
    return (await this.get(uuid))!;
  }

  async get(uuid: string): Promise<StoredService | null> {
    const [row] = await this.byUuid.rows(uuid);
    return row ? serviceRecord(this.box, row) : null;
  }

  /** The service (as `get`) and its product's row (null when gone) in one statement; null for an unknown service. */
  async getWithProduct(uuid: string): Promise<{ service: StoredService; product: Selectable<ProductsTable> | null } | null> {
    const row = await WITH_PRODUCT.first(this.store, { uuid });
    if (!row) return null;
    const service: Record<string, unknown> = {};
    const product: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(row)) {
      if (column.startsWith('product__')) product[column.slice('product__'.length)] = value;
      else service[column] = value;
    }
    return { service: serviceRecord(this.box, service as unknown as ServiceRow), product: product.uuid === null ? null : product as unknown as Selectable<ProductsTable> };
  }

  /** The product and module of a service, without reading (or opening) its data; null when unknown. */
  async productOf(uuid: string): Promise<{ product_uuid: string; module_name: string } | null> {
    const row = await this.store.db.selectFrom('services').select(['product_uuid', 'module as module_name']).where('uuid', '=', uuid).executeTakeFirst();
    return row ?? null;
  }

  /** Services by creation (ties by uuid), optionally of one status and one product. */
  async list(filter: { status?: string; product_uuid?: string } = {}): Promise<StoredService[]> {
    let query = this.store.db.selectFrom('services').selectAll();
    if (filter.status !== undefined) query = query.where('provision_status', '=', filter.status);
    if (filter.product_uuid !== undefined) query = query.where('product_uuid', '=', filter.product_uuid);
    const rows = await query.orderBy('created_at').orderBy('uuid').execute();
    return rows.map((row) => serviceRecord(this.box, row as unknown as ServiceRow));
  }

  /** Counts services per provision status. */
  async countByStatus(): Promise<Record<string, number>> {
    const rows = await this.store.db.selectFrom('services').select(['provision_status', (eb) => eb.fn.countAll<number>().as('n')])
      .groupBy('provision_status').execute();
    return Object.fromEntries(rows.map((r) => [r.provision_status, Number(r.n)]));
  }

  /**
   * What the lifecycle reads before it decides a status change — the status, uuid and product, nothing to open — with the
   * row locked until the transaction ends (PostgreSQL `FOR UPDATE`; SQLite's transactions hold the write lock already).
   */
  async getForStatusChange(uuid: string): Promise<LifecycleService | null> {
    return (await STATUS_FOR_CHANGE.first(this.store, { uuid })) ?? null;
  }

  /**
   * The write of provision_status and its reason (the lifecycle's; modules go through it). With `from`, only while the
   * status is still `from`. True when the row changed.
   */
  async writeProvisionStatus(uuid: string, status: ProvisionStatus, reason?: string, from?: ProvisionStatus): Promise<boolean> {
    const write = { uuid, status, reason: reason ?? null, at: this.clock.now().toISOString() };
    const result = from === undefined ? await WRITE_STATUS.execute(this.store, write) : await WRITE_STATUS_FROM.execute(this.store, { ...write, from });
    return Number(result.numAffectedRows) === 1;
  }

  /** The lifecycle's view of the statuses on this store (services/lifecycle.ts `StatusStore`). */
  statusStore(): StatusStore {
    return { get: (uuid) => this.getForStatusChange(uuid), writeProvisionStatus: (uuid, status, reason, from) => this.writeProvisionStatus(uuid, status, reason, from) };
  }

  /**
   * The modules' ServiceRepository on this store: a module's `setProvisionStatus` is decided and written by the
   * lifecycle (the one writer of provision_status), the data writes land here.
   */
  forModules(lifecycle: { set(uuid: string, status: ProvisionStatus, reason?: string): Promise<boolean> }): ServiceRepository {
    return {
      get: (uuid) => this.get(uuid),
      setProvisionStatus: async (uuid, status, reason) => {
        await lifecycle.set(uuid, status, reason);
      },
      saveProvisionData: (uuid, data) => this.saveProvisionData(uuid, data),
      saveServiceData: (uuid, data) => this.saveServiceData(uuid, data),
    };
  }

  async saveProvisionData(uuid: string, data: Record<string, unknown>): Promise<void> {
    await SAVE_PROVISION_DATA.execute(this.store, { uuid, data: sealServiceData(this.box, data), at: this.clock.now().toISOString() });
  }

  async saveServiceData(uuid: string, data: Record<string, unknown>): Promise<void> {
    await this.store.db.updateTable('services').set({ service_data: sealServiceData(this.box, data), updated_at: this.clock.now().toISOString() })
      .where('uuid', '=', uuid).execute();
  }

  async setProduct(uuid: string, productUuid: string): Promise<void> {
    await this.store.db.updateTable('services').set({ product_uuid: productUuid, updated_at: this.clock.now().toISOString() })
      .where('uuid', '=', uuid).execute();
  }

  /**
   * One page of the admin services list, newest first (ties by uuid), and the total under the same filters: status,
   * product, the product's `server_location`, and `q` in the uuid, the username or the status reason.
   */
  async page(query: ServicePageQuery): Promise<{ uuids: string[]; total: number }> {
    const { store } = this;
    let from = store.db.selectFrom('services as s').leftJoin('products as p', 'p.uuid', 's.product_uuid');
    if (query.status !== undefined) from = from.where('s.provision_status', '=', query.status);
    if (query.product !== undefined) from = from.where('s.product_uuid', '=', query.product);
    if (query.location !== undefined) from = from.where(store.jsonText('p.product_data', 'server_location'), '=', query.location);
    const text = query.q;
    if (text !== undefined) {
      from = from.where((eb) => eb.or([
        store.contains(sql.ref('s.uuid'), text),
        store.contains(sql<string>`coalesce(${store.jsonText('s.service_data', 'username')}, '')`, text),
        store.contains(sql<string>`coalesce(${sql.ref('s.status_reason')}, '')`, text),
      ]));
    }
    const total = await from.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    const rows = await from.select('s.uuid').orderBy('s.created_at', 'desc').orderBy('s.uuid')
      .limit(query.per_page).offset((query.page - 1) * query.per_page).execute();
    return { uuids: rows.map((r) => r.uuid), total: Number(total.n) };
  }
}

/** The stored text of service or provision data: JSON with every secret-named member sealed. */
function sealServiceData(box: SecretBox, data: Record<string, unknown>): string {
  return JSON.stringify(mapSecrets(data, false, (value) => (value === '' ? value : box.seal(value))));
}

/**
 * Service or provision data from its stored text, secrets opened. A text without a sealed value (nor a JSON escape that
 * could spell one) is only parsed: there is nothing to open.
 */
export function openServiceData(box: SecretBox, text: string): Record<string, unknown> {
  if (!text.includes('enc:v1:') && !text.includes('\\u')) return JSON.parse(text) as Record<string, unknown>;
  return mapSecrets(JSON.parse(text), false, (value) => (value.startsWith('enc:v1:') ? box.open(value) : value)) as Record<string, unknown>;
}

/** A `services` row as modules see it (`module` → `module_name`, data opened). */
function serviceRecord(box: SecretBox, row: ServiceRow): StoredService {
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
