// Billing behind the admin API and the client area: prices per product and cycle, orders (a pending service and its
// unpaid invoice), invoices with their transactions, manual payments, refunds (manual, or through the paying gateway)
// and the payment form of a gateway for an invoice.
import type { Clock } from '../../../../shared/clock.ts';
import type { Invoice, Payment } from '../../../contract/payment.ts';
import { HttpError, UNKNOWN_PRODUCT } from '../../errors.ts';
import type { CustomerQueries } from '../../store/query/repositories/customers.ts';
import type { InvoiceFilter, InvoiceRow, OrderRow } from '../../store/query/repositories/invoices.ts';
import type { PriceRow } from '../../store/query/repositories/prices.ts';
import type { TransactionRow } from '../../store/query/repositories/transactions.ts';
import type { BillingRepos, ReposOf } from './billing-repos.ts';
import { NOT_A_PAYMENT, REFUND_TOO_LARGE, UNKNOWN_TRANSACTION, type BillingLedger } from './ledger.ts';
import { currencyExponent, formatMinor, normalizeCurrency, toMinor } from './money.ts';
import type { BillingPeriods } from './periods.ts';
import type { BillingCycle, RefundAction } from './schema.ts';

export const UNKNOWN_INVOICE = (uuid: string) => `invoice not found: ${uuid}`;
const UNKNOWN_CUSTOMER = (uuid: string) => `customer not found: ${uuid}`;
const NO_PRICE = (product: string, cycle: string) => `product ${product} has no price for billing cycle ${cycle}`;
const INVOICE_NOT_PAYABLE = (number: string, status: string) => `invoice ${number} is ${status}: only unpaid or failed invoices can be paid`;
const GATEWAY_UNAVAILABLE = (uuid: string) => `payment gateway not available: ${uuid}`;
const REFUND_FAILED = (message: string) => `refund failed: ${message}`;

/** A price as the API shows it: decimal `amount` and `amount_minor`. */
export interface PriceView extends PriceRow {
  amount: string;
}

/** An invoice as the API shows it. */
export interface InvoiceView extends InvoiceRow {
  amount: string;
  refunded: string;
}

export interface TransactionView extends TransactionRow {
  amount: string;
}

export interface OrderInput {
  customer_uuid?: string;
  /** Found by e-mail address, else created (when no customer_uuid is given). */
  customer?: { email: string; name?: string };
  product_uuid: string;
  billing_cycle: BillingCycle;
  service_data: Record<string, unknown>;
}

export interface BillingServiceDeps {
  clock: Clock;
  /** The repositories on the platform's store (reads, single writes). */
  r: BillingRepos;
  /** The repositories on a transaction's store. */
  repos: ReposOf;
  ledger: BillingLedger;
  /** Recurring billing: the ordered service's billing period, customer credit on new invoices. */
  periods: BillingPeriods;
  /**
   * The row of a new `pending` service as the product's module validates the service data (ServiceAdmin.validService);
   * the order stores it in its own transaction, so a process that dies mid-order leaves no service without its order.
   */
  validService(productUuid: string, serviceData: Record<string, unknown>): Promise<{ product_uuid: string; module_name: string; service_data: Record<string, unknown> }>;
  /** The Payment module bound to a gateway instance, or null when there is none (or it is not active). */
  gateway(gatewayUuid: string): Promise<Payment | null>;
  /** Days from the order to the invoice's due date (default 7). */
  dueDays?: number;
}

export class BillingService {
  constructor(private readonly deps: BillingServiceDeps) {}

  get ledger(): BillingLedger {
    return this.deps.ledger;
  }

  /** The customers orders are placed for (the admin API creates and lists them). */
  get customers(): CustomerQueries {
    return this.deps.r.customers;
  }

  /** Sets the price of a product for a cycle (`amount` as decimal text, e.g. `9.99`). */
  async setPrice(productUuid: string, cycle: BillingCycle, amount: string | number, currency: string): Promise<PriceView> {
    if (!(await this.deps.r.products.get(productUuid))) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    const code = money(() => normalizeCurrency(currency));
    return priceView(await this.deps.r.prices.set(productUuid, cycle, money(() => toMinor(amount, code)), code));
  }

  async listPrices(productUuid?: string): Promise<PriceView[]> {
    return (await this.deps.r.prices.list(productUuid)).map(priceView);
  }

  deletePrice(productUuid: string, cycle: BillingCycle): Promise<boolean> {
    return this.deps.r.prices.delete(productUuid, cycle);
  }

  async refundPolicy(productUuid: string): Promise<{ product_uuid: string; refund_action: RefundAction }> {
    if (!(await this.deps.r.products.get(productUuid))) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    return { product_uuid: productUuid, refund_action: await this.deps.r.prices.refundAction(productUuid) };
  }

  async setRefundPolicy(productUuid: string, action: RefundAction): Promise<{ product_uuid: string; refund_action: RefundAction }> {
    if (!(await this.deps.r.products.get(productUuid))) throw new HttpError(404, UNKNOWN_PRODUCT(productUuid));
    await this.deps.r.prices.setRefundAction(productUuid, action);
    return this.refundPolicy(productUuid);
  }

  /**
   * An order: the customer (given, or found/created by e-mail), a `pending` service validated by the product's module,
   * and its unpaid invoice at the product's price for the cycle, due in `dueDays`, and the service's billing period
   * (`pending` until the invoice is paid; the customer's credit is taken off the invoice). Emits `invoice.created`.
   */
  async order(input: OrderInput): Promise<{ order: OrderRow; invoice: InvoiceView; service_uuid: string }> {
    const { products, prices } = this.deps.r;
    const product = await products.get(input.product_uuid);
    if (!product) throw new HttpError(404, UNKNOWN_PRODUCT(input.product_uuid));
    const price = await prices.get(product.uuid, input.billing_cycle);
    if (!price) throw new HttpError(422, NO_PRICE(product.uuid, input.billing_cycle));
    const customerUuid = await this.customerFor(input);
    const fields = await this.deps.validService(product.uuid, input.service_data);
    const due = new Date(this.deps.clock.now().getTime() + (this.deps.dueDays ?? 7) * 86_400_000).toISOString().slice(0, 10);
    const { order, invoice, service } = await this.deps.r.store.transaction(async (store) => {
      const r = this.deps.repos(store);
      const { customers, invoices } = r;
      const service = await r.services.create(fields);
      await customers.assignService(service.uuid, customerUuid);
      const order = await invoices.createOrder({ customer_uuid: customerUuid, product_uuid: product.uuid, service_uuid: service.uuid, billing_cycle: input.billing_cycle });
      const invoice = await invoices.createInvoice({
        order_uuid: order.uuid, customer_uuid: customerUuid, service_uuid: service.uuid,
        description: `${product.name || `${product.module} ${String(product.product_data.plan_type ?? product.uuid)}`} (${input.billing_cycle})`,
        amount_minor: price.amount_minor, currency: price.currency, due_date: due,
      });
      await this.deps.periods.onOrder(r, service.uuid, input.billing_cycle, price.amount_minor, price.currency);
      await this.deps.periods.creditNew(r, [invoice.uuid]);
      return { order, invoice: (await invoices.get(invoice.uuid))!, service };
    });
    this.deps.ledger.emit('invoice.created', await this.deps.ledger.event(invoice));
    this.deps.ledger.flush();
    return { order, invoice: invoiceView(invoice), service_uuid: service.uuid };
  }

  async invoice(uuid: string): Promise<InvoiceView & { transactions: TransactionView[] }> {
    const row = await this.requireInvoice(uuid);
    return { ...invoiceView(row), transactions: (await this.deps.r.transactions.forInvoice(uuid)).map(transactionView) };
  }

  async listInvoices(filter: InvoiceFilter, page: number, perPage: number): Promise<{ invoices: InvoiceView[]; page: number; per_page: number; total: number }> {
    const { rows, total } = await this.deps.r.invoices.list(filter, perPage, (page - 1) * perPage);
    return { invoices: rows.map(invoiceView), page, per_page: perPage, total };
  }

  /** A page of orders, newest first, each with its first invoice's uuid, number and status. */
  async listOrders(page: number, perPage: number): Promise<{ orders: Array<OrderRow & { invoice: Pick<InvoiceView, 'uuid' | 'number' | 'status' | 'amount' | 'currency'> | null }>; page: number; per_page: number; total: number }> {
    const { rows, total } = await this.deps.r.invoices.listOrders(perPage, (page - 1) * perPage);
    const orders = await Promise.all(rows.map(async (order) => {
      const row = await this.deps.r.invoices.invoiceOfOrder(order.uuid);
      const view = row ? invoiceView(row) : null;
      return { ...order, invoice: view ? { uuid: view.uuid, number: view.number, status: view.status, amount: view.amount, currency: view.currency } : null };
    }));
    return { orders, page, per_page: perPage, total };
  }

  /** A manual payment of the whole invoice; 409 when it is not unpaid or failed. Queues the service's create(). */
  async payManually(invoiceUuid: string, reference?: string, note?: string): Promise<InvoiceView & { transactions: TransactionView[] }> {
    const row = await this.requireInvoice(invoiceUuid);
    const done = await this.deps.ledger.recordManualPayment({ invoice_uuid: row.uuid, reference, note });
    if (!done.paid) throw new HttpError(409, INVOICE_NOT_PAYABLE(row.number, done.invoice?.status ?? row.status));
    return this.invoice(row.uuid);
  }

  /**
   * Refunds `amount` (decimal text, the payment's currency; default what is left) of a payment transaction: a manual
   * payment is recorded at once, a gateway payment goes through its Payment module's refund() first — when the gateway
   * refuses, nothing is recorded and the invoice stays paid (502 with the gateway's text).
   */
  async refund(transactionUuid: string, amount?: string | number): Promise<Record<string, unknown>> {
    const payment = await this.deps.r.transactions.get(transactionUuid);
    if (!payment) throw new HttpError(404, UNKNOWN_TRANSACTION(transactionUuid));
    if (payment.kind !== 'payment') throw new HttpError(422, NOT_A_PAYMENT(transactionUuid));
    const minor = amount === undefined ? payment.amount_minor - payment.refunded_minor : money(() => toMinor(amount, payment.currency));
    if (payment.gateway === 'manual') {
      try {
        return { status: 'success', ...(await this.deps.ledger.recordRefund({ transaction_uuid: payment.uuid, amount_minor: minor, external_id: null })) };
      } catch (error) {
        throw new HttpError(422, (error as Error).message);
      }
    }
    const left = payment.amount_minor - payment.refunded_minor;
    if (minor <= 0 || minor > left) throw new HttpError(422, REFUND_TOO_LARGE(left, payment.currency));
    const gateway = payment.gateway_uuid ? await this.deps.gateway(payment.gateway_uuid) : null;
    if (!gateway) throw new HttpError(422, GATEWAY_UNAVAILABLE(payment.gateway_uuid ?? payment.gateway));
    const answer = await gateway.refund(payment.uuid, minor / 10 ** currencyExponent(payment.currency));
    if (answer.status !== 'success') throw new HttpError(502, REFUND_FAILED(String(answer.message ?? 'unknown error')), { invoice: await this.invoice(payment.invoice_uuid) });
    return answer;
  }

  /**
   * The payment form (or redirect) of gateway `gatewayUuid` for an unpaid or failed invoice: the Payment module's
   * getClientAreaHtml with the spec's invoice object.
   */
  async paymentHtml(invoiceUuid: string, gatewayUuid: string, urls: { return_url: string; cancel_url: string }): Promise<string> {
    const row = await this.requireInvoice(invoiceUuid);
    if (row.status !== 'unpaid' && row.status !== 'failed') throw new HttpError(409, INVOICE_NOT_PAYABLE(row.number, row.status));
    const gateway = await this.deps.gateway(gatewayUuid);
    if (!gateway) throw new HttpError(404, GATEWAY_UNAVAILABLE(gatewayUuid));
    const customer = row.customer_uuid ? await this.deps.r.customers.get(row.customer_uuid) : undefined;
    return gateway.getClientAreaHtml({
      invoice: invoiceObject(row), ...urls,
      customer: customer ? { uuid: customer.uuid, email: customer.email, name: customer.name } : null,
      // A service's invoice is paid again every period: the gateway may save the method for the renewals.
      save_method: row.service_uuid !== null && customer !== undefined,
    });
  }

  private async customerFor(input: OrderInput): Promise<string> {
    const { customers } = this.deps.r;
    if (input.customer_uuid) {
      if (!(await customers.get(input.customer_uuid))) throw new HttpError(404, UNKNOWN_CUSTOMER(input.customer_uuid));
      return input.customer_uuid;
    }
    if (!input.customer) throw new HttpError(422, 'an order needs customer_uuid or customer.email');
    const found = await customers.findByEmail(input.customer.email);
    return found ? found.uuid : (await customers.create({ email: input.customer.email, name: input.customer.name })).uuid;
  }

  private async requireInvoice(uuid: string): Promise<InvoiceRow> {
    const row = await this.deps.r.invoices.get(uuid);
    if (!row) throw new HttpError(404, UNKNOWN_INVOICE(uuid));
    return row;
  }
}

/** The spec's invoice object (uuid, number, due-amount accessor, currency) of a row. */
export function invoiceObject(row: InvoiceRow): Invoice {
  const due = row.status === 'unpaid' || row.status === 'failed' ? row.amount_minor : 0;
  return { uuid: row.uuid, number: row.number, currency: row.currency, dueAmount: () => due / 10 ** currencyExponent(row.currency) };
}

function money<T>(fn: () => T): T {
  try {
    return fn();
  } catch (error) {
    throw new HttpError(422, (error as Error).message);
  }
}

function priceView(row: PriceRow): PriceView {
  return { ...row, amount: formatMinor(row.amount_minor, row.currency) };
}

function invoiceView(row: InvoiceRow): InvoiceView {
  return { ...row, amount: formatMinor(row.amount_minor, row.currency), refunded: formatMinor(row.refunded_minor, row.currency) };
}

function transactionView(row: TransactionRow): TransactionView {
  return { ...row, amount: formatMinor(row.amount_minor, row.currency) };
}
