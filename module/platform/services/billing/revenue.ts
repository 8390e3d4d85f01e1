// Revenue at a glance: net revenue per month (paid minus refunded, per currency), MRR of running subscriptions
// (each recurring amount over its cycle's months), services started and ended per month, and the amount overdue.
import type { Clock } from '../../../../shared/clock.ts';
import type { RevenueQueries } from '../../store/query/repositories/revenue.ts';
import { currencyExponent, formatMinor } from './money.ts';
import type { BillingCycle } from './schema.ts';

const CYCLE_MONTHS: Record<BillingCycle, number> = { monthly: 1, quarterly: 3, semiannually: 6, annually: 12 };

/** The figures of the last `months` months, oldest first (the current month last). */
export interface RevenueReport {
  months: string[];
  currencies: string[];
  /** Per currency, per month (aligned with `months`): minor units. */
  revenue: Record<string, { paid_minor: number[]; refunded_minor: number[]; net_minor: number[]; net: string[] }>;
  /** Monthly recurring revenue per currency (minor units, rounded down) and the subscriptions counted. */
  mrr: Array<{ currency: string; mrr_minor: number; mrr: string; subscriptions: number }>;
  services_new: number[];
  services_ended: number[];
  overdue: Array<{ currency: string; amount_minor: number; amount: string; invoices: number }>;
}

/** `YYYY-MM` of the `back`-th month before `now` (UTC). */
function monthKey(now: Date, back: number): string {
  const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1));
  return d.toISOString().slice(0, 7);
}

export class Revenue {
  constructor(private readonly repo: RevenueQueries, private readonly clock: Clock) {}

  /** The report of the last `months` months (1–60). */
  async report(months = 12): Promise<RevenueReport> {
    const now = this.clock.now();
    const span = Math.min(60, Math.max(1, Math.trunc(months)));
    const keys = Array.from({ length: span }, (_, i) => monthKey(now, span - 1 - i));
    const since = `${keys[0]}-01T00:00:00.000Z`;
    const index = new Map(keys.map((k, i) => [k, i]));
    const revenue: RevenueReport['revenue'] = {};
    for (const row of await this.repo.money(since)) {
      const at = index.get(row.month);
      if (at === undefined) continue;
      const entry = (revenue[row.currency] ??= { paid_minor: keys.map(() => 0), refunded_minor: keys.map(() => 0), net_minor: [], net: [] });
      entry.paid_minor[at] += row.paid_minor;
      entry.refunded_minor[at] += row.refunded_minor;
    }
    for (const [currency, entry] of Object.entries(revenue)) {
      entry.net_minor = entry.paid_minor.map((paid, i) => paid - entry.refunded_minor[i]);
      entry.net = entry.net_minor.map((minor) => formatMinor(minor, currency));
    }
    const mrr = new Map<string, { minor: number; n: number }>();
    for (const row of await this.repo.recurring()) {
      const m = mrr.get(row.currency) ?? { minor: 0, n: 0 };
      m.minor += row.minor / (CYCLE_MONTHS[row.billing_cycle as BillingCycle] ?? 1);
      m.n += row.n;
      mrr.set(row.currency, m);
    }
    const perMonth = (rows: Array<{ month: string; n: number }>) => {
      const out = keys.map(() => 0);
      for (const r of rows) if (index.has(r.month)) out[index.get(r.month)!] += r.n;
      return out;
    };
    const currencies = [...new Set([...Object.keys(revenue), ...mrr.keys()])].sort();
    return {
      months: keys, currencies, revenue,
      mrr: [...mrr.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([currency, m]) => ({
        currency, mrr_minor: Math.floor(m.minor), mrr: formatMinor(Math.floor(m.minor), currency), subscriptions: m.n,
      })),
      services_new: perMonth(await this.repo.created(since)),
      services_ended: perMonth(await this.repo.ended(since)),
      overdue: (await this.repo.overdue(now.toISOString().slice(0, 10))).map((r) => ({ currency: r.currency, amount_minor: r.minor, amount: formatMinor(r.minor, r.currency), invoices: r.n })),
    };
  }
}

/** Minor units as a decimal number of the currency (for charts and gauges). */
export function majorUnits(minor: number, currency: string): number {
  return minor / 10 ** currencyExponent(currency);
}

const reports = new WeakMap<object, Revenue>();

/** The Revenue service of a platform (one per store). */
export function revenueOf(platform: { store: object; clock: Clock }, make: () => Revenue): Revenue {
  let revenue = reports.get(platform.store);
  if (!revenue) {
    revenue = make();
    reports.set(platform.store, revenue);
  }
  return revenue;
}
