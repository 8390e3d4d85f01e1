// The host's read API of platform data (services, customers, products, invoices) for modules: a module reads the
// platform's records through it, never by naming the platform's tables. Asynchronous: it answers from the platform's
// query layer (SQLite or PostgreSQL). Platform process only (null in a remote worker).

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

/** The platform's billing calendar (dates `YYYY-MM-DD`, UTC), for a module that counts in billing periods. */
export interface BillingCalendar {
  /** The date of `instant` (UTC). */
  dateOf(instant: Date): string;
  addDays(date: string, days: number): string;
  /** `date` moved by `months`, on `anchorDay` (or the month's last day when shorter). */
  addMonths(date: string, months: number, anchorDay: number): string;
  /** The monthly period holding `on` of a service paid through `paidThrough` on `anchorDay`. */
  monthAround(on: string, paidThrough: string, anchorDay: number): { start: string; end: string };
}

/**
 * Read access to the platform's records (`ExtensionEnv.platform`), one query each on the platform's store. Member
 * names in a match are checked as plain identifiers before they reach SQL.
 */
export interface PlatformReads {
  service(uuid: string): Promise<ServiceView | null>;
  customer(uuid: string): Promise<CustomerView | null>;
  product(uuid: string): Promise<ProductView | null>;
  invoice(uuid: string): Promise<InvoiceView | null>;
  /** The uuid of one service matching `match`, or null (e.g. a username already held at a location). */
  findService(match: ServiceMatch): Promise<string | null>;
  /** The uuids of the services matching `match`, oldest first. */
  serviceUuids(match: ServiceListMatch): Promise<string[]>;
  /**
   * The uuid of the channel instance of Notification module `name` carrying the platform's messages: the one whose uuid
   * or label is `configured`, else the oldest; null when there is none.
   */
  notificationChannel(name: string, configured?: string | null): Promise<string | null>;
  /** The billing calendar (pure date arithmetic). */
  readonly calendar: BillingCalendar;
}
