// Saved payment methods: what a customer sees and removes in the client area, and the off-session charge of a renewal
// invoice on its due date (the gateway's chargeSaved; its webhook settles the invoice, a refusal is told once as
// payment.auto_charge_failed with the pay link).
import type { Logger } from 'pino';
import type { Payment } from '../../../contract/payment.ts';
import { HttpError } from '../../errors.ts';
import type { PaymentMethodRow } from '../../store/query/repositories/payment-methods.ts';
import { invoiceObject } from './billing-service.ts';
import type { BillingRepos, ReposOf } from './billing-repos.ts';
import type { BillingLedger } from './ledger.ts';

const UNKNOWN_METHOD = (uuid: string) => `payment method not found: ${uuid}`;

/** A saved method as the customer and the admin see it (references only). */
export type PaymentMethodView = Omit<PaymentMethodRow, 'external_customer' | 'external_id'>;

/** What one charge attempt did. */
export interface ChargeOutcome {
  outcome: 'succeeded' | 'processing' | 'failed' | 'skipped';
  invoice_uuid: string;
  gateway?: string;
  code?: string;
  reason?: string;
}

export interface SavedMethodsDeps {
  r: BillingRepos;
  repos: ReposOf;
  ledger: BillingLedger;
  afterCommit(): void;
  /** The Payment module bound to a gateway instance, or null when it is not available. */
  gateway(gatewayUuid: string): Promise<Payment | null>;
  logger: Logger;
}

const view = ({ external_customer: _c, external_id: _i, ...rest }: PaymentMethodRow): PaymentMethodView => rest;

export class SavedMethods {
  constructor(private readonly deps: SavedMethodsDeps) {}

  async list(customerUuid: string): Promise<PaymentMethodView[]> {
    return (await this.deps.r.methods.ofCustomer(customerUuid)).map(view);
  }

  /** Removes a customer's saved method (forgotten at the gateway first, best effort); 404 for anyone else's. */
  async remove(customerUuid: string, methodUuid: string): Promise<PaymentMethodView> {
    const method = await this.deps.r.methods.get(methodUuid);
    if (!method || method.customer_uuid !== customerUuid) throw new HttpError(404, UNKNOWN_METHOD(methodUuid));
    try {
      await (await this.deps.gateway(method.gateway_uuid))?.detachMethod({ uuid: method.uuid, external_customer: method.external_customer, external_id: method.external_id, label: method.label });
    } catch (error) {
      this.deps.logger.warn({ method_uuid: method.uuid, err: (error as Error).message }, 'billing: the gateway could not detach a removed payment method');
    }
    await this.deps.r.store.transaction(async (store) => {
      const r = this.deps.repos(store);
      if (!(await r.methods.remove(method.uuid))) return;
      await r.outbox.event('payment.method_removed', { customer_uuid: customerUuid, service_uuid: null, method_uuid: method.uuid, gateway: method.gateway, label: method.label }, method.uuid);
    });
    this.deps.afterCommit();
    return view(method);
  }

  /**
   * Charges the customer's saved method (on an available gateway) off-session for an open invoice. A refusal is
   * recorded as payment.auto_charge_failed; a gateway that cannot be reached throws (the job tries again: the
   * gateway's idempotency key per invoice keeps it one charge).
   */
  async charge(invoiceUuid: string): Promise<ChargeOutcome> {
    const row = await this.deps.r.invoices.get(invoiceUuid);
    if (!row || (row.status !== 'unpaid' && row.status !== 'failed') || row.amount_minor <= 0 || !row.customer_uuid) {
      return { outcome: 'skipped', invoice_uuid: invoiceUuid, reason: 'the invoice is not payable' };
    }
    let chosen: { m: Awaited<ReturnType<BillingRepos['methods']['ofCustomer']>>[number]; gateway: Payment } | undefined;
    for (const m of await this.deps.r.methods.ofCustomer(row.customer_uuid)) {
      const gateway = await this.deps.gateway(m.gateway_uuid);
      if (gateway) { chosen = { m, gateway }; break; }
    }
    if (!chosen?.gateway) return { outcome: 'skipped', invoice_uuid: invoiceUuid, reason: 'no saved payment method on an available gateway' };
    const { m, gateway } = chosen;
    const answer = await gateway.chargeSaved({
      invoice: invoiceObject(row), amount_minor: row.amount_minor, currency: row.currency, description: `${row.number}: ${row.description}`,
      method: { uuid: m.uuid, external_customer: m.external_customer, external_id: m.external_id, label: m.label },
    });
    if (answer.status === 'failed') {
      await this.deps.ledger.recordAutoChargeFailure({ invoice_uuid: row.uuid, gateway: m.gateway, code: answer.code ?? 'payment_failed', reason: answer.message ?? 'the payment was refused' });
      return { outcome: 'failed', invoice_uuid: row.uuid, gateway: m.gateway, code: answer.code, reason: answer.message };
    }
    return { outcome: answer.status, invoice_uuid: row.uuid, gateway: m.gateway };
  }
}
