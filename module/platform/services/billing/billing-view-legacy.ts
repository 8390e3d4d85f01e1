// A bridge while ServiceAdmin's describe() is synchronous (i22-core moves it): the service's billing view read through
// the synchronous SQLite repositories. BillingPeriods.view is the one to use; delete this file (and the synchronous
// service-billing and invoices repositories) once ServiceAdmin awaits its billing view.
import type { Db } from '../../store/db.ts';
import { InvoiceRepository } from '../../store/repositories/invoices.ts';
import { ServiceBillingRepository } from '../../store/repositories/service-billing.ts';
import { formatMinor } from './money.ts';
import type { ServiceBillingView } from './periods.ts';

/** The synchronous reader of a service's billing view (SQLite only). */
export function legacyBillingView(db: Db): (serviceUuid: string) => ServiceBillingView | null {
  const periods = new ServiceBillingRepository(db);
  const invoices = new InvoiceRepository(db);
  return (serviceUuid) => {
    const row = periods.get(serviceUuid);
    if (!row) return null;
    return {
      ...row,
      recurring: formatMinor(row.recurring_minor, row.currency),
      open_invoices: invoices.openOfService(serviceUuid).map((i) => ({
        uuid: i.uuid, number: i.number, kind: i.kind, due_date: i.due_date, amount: formatMinor(i.amount_minor, i.currency), status: i.status,
      })),
    };
  };
}
