// Customer credit over the query layer: a ledger of credits (a plan downgrade's unused time) and their use by later
// invoices; the balance is the sum per currency. A use is keyed by its invoice (UNIQUE (invoice, reason)), and taken
// under a lock on the customer's row, so two invoices made at once never spend the same credit twice.
import { systemClock, type Clock } from '../../../../../shared/clock.ts';
import type { QueryStore } from '../query-store.ts';

export interface CreditEntry {
  id: number;
  customer_uuid: string;
  currency: string;
  /** Positive: credit given; negative: credit used. */
  amount_minor: number;
  /** `plan_change`, `applied`, … */
  reason: string;
  service_uuid: string | null;
  invoice_uuid: string | null;
  created_at: string;
}

/** Repository of `customer_credits`. */
export class CustomerCreditQueries {
  constructor(private readonly store: QueryStore, private readonly clock: Clock = systemClock) {}

  /** Adds an entry; false when the invoice already has an entry of that reason. */
  async add(entry: Omit<CreditEntry, 'id' | 'created_at'>): Promise<boolean> {
    const result = await this.store.db.insertInto('customer_credits').values({ ...entry, created_at: this.clock.now().toISOString() })
      .onConflict((oc) => oc.doNothing()).executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async balance(customerUuid: string, currency: string): Promise<number> {
    const row = await this.store.db.selectFrom('customer_credits').select((eb) => eb.fn.coalesce(eb.fn.sum<number>('amount_minor'), eb.lit(0)).as('n'))
      .where('customer_uuid', '=', customerUuid).where('currency', '=', currency).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /**
   * Spends up to `upTo` of the customer's credit on `invoiceUuid` (once per invoice): answers what was taken (0 when
   * there was none, or the invoice had taken its share before). Call inside the invoice's transaction: the customer's
   * row is locked first (a no-op write), so concurrent uses of one balance wait for each other on both engines.
   */
  async use(customerUuid: string, currency: string, upTo: number, invoiceUuid: string, serviceUuid: string | null): Promise<number> {
    await this.store.db.updateTable('customers').set((eb) => ({ updated_at: eb.ref('updated_at') })).where('uuid', '=', customerUuid).execute();
    const take = Math.min(await this.balance(customerUuid, currency), upTo);
    if (take <= 0) return 0;
    const added = await this.add({ customer_uuid: customerUuid, currency, amount_minor: -take, reason: 'applied', service_uuid: serviceUuid, invoice_uuid: invoiceUuid });
    return added ? take : 0;
  }

  /** The balance per currency and the entries, newest first. */
  async of(customerUuid: string): Promise<{ balances: Record<string, number>; entries: CreditEntry[] }> {
    const sums = await this.store.db.selectFrom('customer_credits').select(['currency', (eb) => eb.fn.sum<number>('amount_minor').as('n')])
      .where('customer_uuid', '=', customerUuid).groupBy('currency').orderBy('currency').execute();
    const entries = await this.store.db.selectFrom('customer_credits').selectAll().where('customer_uuid', '=', customerUuid).orderBy('id', 'desc').limit(200).execute();
    return { balances: Object.fromEntries(sums.map((s) => [s.currency, Number(s.n)])), entries };
  }
}
