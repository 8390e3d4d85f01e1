// The host's read API of platform data (services, customers, products, invoices) for modules: a module reads the
// platform's records through it, never by naming the platform's tables. Platform process only (null in a remote worker).

/** A service as a module may read it: secret-named members of its data are left out. */
export interface ServiceView {
  uuid: string;
  /** The Product module handling it, e.g. `VpnProduct`. */
  module: string;
  product_uuid: string;
  customer_uuid: string | null;
  provision_status: string;
  /** Values the customer/admin entered; secret-named members (at any depth) left out. */
  service_data: Record<string, unknown>;
  /** What provisioning produced; secret-named members (at any depth) left out. */
  provision_data: Record<string, unknown>;
  /** Recurring billing state (`active`, `suspended`, …), null without billing. */
  billing_state: string | null;
  /** Recurring billing: the paid-through date and the anchor day (null without billing or before the first payment). */
  next_due_date: string | null;
  anchor_day: number | null;
}

/** A customer as a module may read it (no password hash). */
export interface CustomerView {
  uuid: string;
  email: string;
  name: string;
  /** True when the customer has a saved payment method (renewals are charged to it). */
  has_payment_method: boolean;
}

/** A product as a module may read it. */
export interface ProductView {
  uuid: string;
  module: string;
  product_data: Record<string, unknown>;
}

/** An invoice as a module may read it (amounts in minor units). */
export interface InvoiceView {
  uuid: string;
  number: string;
  customer_uuid: string | null;
  service_uuid: string | null;
  description: string;
  amount_minor: number;
  currency: string;
  due_date: string;
  /** `unpaid`, `paid`, `failed` or `refunded`. */
  status: string;
  paid_at: string | null;
}

/** Which services `findService` looks for: string members of product and service data compared for equality. */
export interface ServiceMatch {
  module: string;
  /** Leave out terminated services. */
  live?: boolean;
  productData?: Readonly<Record<string, string>>;
  serviceData?: Readonly<Record<string, string>>;
  /** A service never matched (the one being edited). */
  except?: string | null;
}

/** Which services `serviceUuids` lists. */
export interface ServiceListMatch {
  module: string;
  /** Only services in one of these provision statuses. */
  statuses?: readonly string[];
  /** Only services whose product has each member as a number above the value (a missing or empty member counts as 0). */
  productNumberAbove?: Readonly<Record<string, number>>;
}

/**
 * Read access to the platform's records. Synchronous while the platform runs on SQLite; an implementation on an
 * asynchronous store answers the same records (the interface then becomes `MaybePromise`, see docs/store.md).
 */
export interface PlatformReads {
  service(uuid: string): ServiceView | null;
  customer(uuid: string): CustomerView | null;
  product(uuid: string): ProductView | null;
  invoice(uuid: string): InvoiceView | null;
  /** The uuid of one service matching `match`, or null (e.g. a username already held at a location). */
  findService(match: ServiceMatch): string | null;
  /** The uuids of the services matching `match`, oldest first. */
  serviceUuids(match: ServiceListMatch): string[];
}
