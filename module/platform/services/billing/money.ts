// Money in a currency's minor unit: exact decimal text ↔ integer minor units (no floating point), currency checks.

/** ISO 4217 codes the runtime knows (Intl), upper case. */
const KNOWN = new Set(Intl.supportedValuesOf('currency'));

const INVALID_CURRENCY = (code: string) => `unknown currency: ${code} (an ISO 4217 code such as EUR)`;
const INVALID_AMOUNT = (text: string, currency: string, digits: number) =>
  `invalid amount: ${text} (a non-negative decimal with at most ${digits} decimals for ${currency})`;

/** The currency code upper-cased, or an Error naming it when the runtime does not know it. */
export function normalizeCurrency(code: string): string {
  const upper = code.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(upper) || !KNOWN.has(upper)) throw new RangeError(INVALID_CURRENCY(code));
  return upper;
}

/** Decimals of the currency's minor unit (EUR 2, JPY 0, KWD 3), as Intl defines them. */
export function currencyExponent(currency: string): number {
  let digits = exponents.get(currency);
  if (digits === undefined) {
    digits = new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
    // Only codes Intl accepted get here (it throws on others), so the map stays bounded by the ISO 4217 list.
    exponents.set(currency, digits);
  }
  return digits;
}

const exponents = new Map<string, number>();

/** `9.99` EUR → 999; exact on the decimal text, refuses more decimals than the currency has or a negative value. */
export function toMinor(amount: string | number, currency: string): number {
  const digits = currencyExponent(currency);
  const text = typeof amount === 'number' ? numberText(amount) : amount.trim();
  const match = /^(\d{1,12})(?:\.(\d+))?$/.exec(text);
  if (!match || (match[2] ?? '').length > digits) throw new RangeError(INVALID_AMOUNT(String(amount), currency, digits));
  const fraction = (match[2] ?? '').padEnd(digits, '0');
  return Number(match[1]) * 10 ** digits + (digits ? Number(fraction) : 0);
}

/** 999 EUR → `9.99`; 500 JPY → `500`. */
export function formatMinor(minor: number, currency: string): string {
  const digits = currencyExponent(currency);
  const sign = minor < 0 ? '-' : '';
  const abs = Math.abs(minor);
  if (digits === 0) return `${sign}${abs}`;
  const scale = 10 ** digits;
  return `${sign}${Math.floor(abs / scale)}.${String(abs % scale).padStart(digits, '0')}`;
}

/** A number's shortest decimal text without exponent (9.99 → `9.99`, 1e-7 → refused later as too many decimals). */
function numberText(value: number): string {
  if (!Number.isFinite(value)) return String(value);
  const text = String(value);
  return /e/i.test(text) ? value.toFixed(20).replace(/0+$/, '').replace(/\.$/, '') : text;
}
