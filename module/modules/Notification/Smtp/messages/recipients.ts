// Who a message goes to and what it may say: the customer owning a service (services.customer_uuid → customers) and the
// service's non-secret facts (plan, location, panel account, address). Read through the host's read API of platform data
// (services, customers, products); platform process only.
import type { PlatformReads } from '../../../../contract/platform-reads.ts';

/** The customer a message is addressed to. */
export interface Recipient {
  customer_uuid: string;
  email: string;
  name: string;
}

/** What a service message may show; never a password or key. */
export interface ServiceFacts {
  service_uuid: string;
  module: string;
  provision_status: string;
  plan_type: string | null;
  server_location: string | null;
  /** VpnProduct's provision data: the panel account and where it lives (null before provisioning). */
  account_name: string | null;
  wg_server: string | null;
  address: string | null;
  panel_location: string | null;
  /** Name of the panel holding the account (panels with names), else null: the location names the panel. */
  panel: string | null;
  username: string | null;
  /** The service's billing state (recurring billing: `active`, `suspended` for non-payment, …), null without billing. */
  billing_state: string | null;
}

/** Lookups of recipients and service facts. */
export interface RecipientDirectory {
  ofService(serviceUuid: string): Promise<Recipient | null>;
  ofCustomer(customerUuid: string): Promise<Recipient | null>;
  service(serviceUuid: string): Promise<ServiceFacts | null>;
  /** True when the customer has a saved payment method (renewals are charged to it). */
  hasSavedMethod(customerUuid: string): Promise<boolean>;
}

/** Over the host's read API (`ExtensionEnv.platform`). Secret-named members never reach it. */
export class HostRecipientDirectory implements RecipientDirectory {
  constructor(private readonly platform: PlatformReads) {}

  async ofService(serviceUuid: string): Promise<Recipient | null> {
    const customer = (await this.platform.service(serviceUuid))?.customer_uuid;
    return customer ? this.ofCustomer(customer) : null;
  }

  async ofCustomer(customerUuid: string): Promise<Recipient | null> {
    const customer = await this.platform.customer(customerUuid);
    return customer ? { customer_uuid: customer.uuid, email: customer.email, name: customer.name } : null;
  }

  async service(serviceUuid: string): Promise<ServiceFacts | null> {
    const service = await this.platform.service(serviceUuid);
    if (!service) return null;
    const product = (await this.platform.product(service.product_uuid))?.product_data ?? {};
    const provision = service.provision_data;
    return {
      service_uuid: service.uuid, module: service.module, provision_status: service.provision_status,
      plan_type: text(product.plan_type), server_location: text(product.server_location), account_name: text(provision.account_name),
      wg_server: text(provision.wg_server), address: text(provision.address), panel_location: text(provision.panel_location),
      panel: text(provision.panel), username: text(service.service_data.username), billing_state: service.billing_state,
    };
  }

  async hasSavedMethod(customerUuid: string): Promise<boolean> {
    return (await this.platform.customer(customerUuid))?.has_payment_method ?? false;
  }
}

/** A JSON member as message text: strings (not empty) and numbers; anything else is null. */
function text(value: unknown): string | null {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : null;
}
