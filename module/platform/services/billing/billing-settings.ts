// Billing settings: the global ones (schedule, batch size, dunning defaults) and the dunning keys a product may
// override; zod schemas, defaults and the effective settings of a product. Pure.
import { z } from 'zod';

const days = (max: number) => z.number().int().min(0).max(max);
const dayList = (max: number) => z.array(z.number().int().min(1).max(max)).max(10).transform((list) => [...new Set(list)].sort((a, b) => a - b));

/** The dunning keys: global defaults, each overridable per product. */
const dunningShape = {
  /** Days before the due date the renewal invoice is made. */
  lead_days: days(90),
  /** Reminder mails this many days before the due date (the invoice still unpaid). */
  reminder_days_before: dayList(60),
  /** Reminder mails this many days after the due date. */
  reminder_days_after: dayList(365),
  /** Suspend (the service's suspend() job) this many days after the due date; null: never. */
  suspend_after_days: days(365).nullable(),
  /** Terminate (terminate() job) this many days after the due date; null: never. */
  terminate_after_days: days(3650).nullable(),
  /** Charge a saved payment method off-session on the due date. */
  auto_charge: z.boolean(),
};

export type DunningSettings = { [K in keyof typeof dunningShape]: z.output<(typeof dunningShape)[K]> };

/** Every global setting: the dunning defaults plus the schedule. */
export interface BillingSettings extends DunningSettings {
  /** The billing run is scheduled this often (minutes, at most hourly). */
  run_every_minutes: number;
  /** Services per batch (one transaction each) of the billing run. */
  batch_size: number;
}

export const DEFAULT_BILLING_SETTINGS: Readonly<BillingSettings> = Object.freeze({
  lead_days: 7,
  reminder_days_before: [3],
  reminder_days_after: [7],
  suspend_after_days: 3,
  terminate_after_days: 30,
  auto_charge: true,
  run_every_minutes: 60,
  batch_size: 500,
});

const SUSPEND_AFTER_TERMINATE = 'terminate_after_days must be greater than suspend_after_days';

const ordered = (s: Partial<DunningSettings>) =>
  s.suspend_after_days === null || s.suspend_after_days === undefined || s.terminate_after_days === null || s.terminate_after_days === undefined ||
  s.terminate_after_days > s.suspend_after_days;

/** A change of the global settings (any subset of keys). */
export const billingSettingsPatchSchema = z.object({
  ...dunningShape,
  run_every_minutes: z.number().int().min(1).max(60),
  batch_size: z.number().int().min(10).max(10_000),
}).partial().strict();

/** A product's overrides: any dunning key, `null` = use the global value again. */
export const productOverridesSchema = z.object(
  Object.fromEntries(Object.entries(dunningShape).map(([key, schema]) => [key, schema.nullable().optional()])) as {
    [K in keyof typeof dunningShape]: z.ZodOptional<z.ZodNullable<(typeof dunningShape)[K]>>;
  },
).strict();

export type ProductOverrides = Partial<DunningSettings>;

/** The global settings after `patch`; throws a RangeError when the result is inconsistent. */
export function mergeSettings(current: BillingSettings, patch: z.output<typeof billingSettingsPatchSchema>): BillingSettings {
  const next = { ...current, ...patch };
  if (!ordered(next)) throw new RangeError(SUSPEND_AFTER_TERMINATE);
  return next;
}

/** A product's overrides after `patch` (null members dropped). */
export function mergeOverrides(current: ProductOverrides, patch: z.output<typeof productOverridesSchema>): ProductOverrides {
  const next: Record<string, unknown> = { ...current };
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key];
    else if (value !== undefined) next[key] = value;
  }
  return next as ProductOverrides;
}

/** The dunning settings of a product: its overrides over the global settings; throws when inconsistent. */
export function effectiveSettings(global: BillingSettings, overrides: ProductOverrides | null): BillingSettings {
  const merged = { ...global, ...(overrides ?? {}) };
  if (!ordered(merged)) throw new RangeError(SUSPEND_AFTER_TERMINATE);
  return merged;
}

/** Stored settings read back: unknown keys dropped, missing keys defaulted. */
export function readSettings(stored: unknown): BillingSettings {
  const parsed = billingSettingsPatchSchema.strip().safeParse(stored ?? {});
  return { ...DEFAULT_BILLING_SETTINGS, ...(parsed.success ? parsed.data : {}) };
}

/** Stored product overrides read back (invalid members dropped). */
export function readOverrides(stored: unknown): ProductOverrides {
  const parsed = productOverridesSchema.strip().safeParse(stored ?? {});
  return parsed.success ? mergeOverrides({}, parsed.data) : {};
}
