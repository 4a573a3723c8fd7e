import { findCurrency } from '../../src/kernel/domain/currency.ts';

/** Formatters are costly to build, so they are kept; locales are bounded by negotiateLocale, the size by this cap. */
const MAX_CACHED = 256;
const numberFormats = new Map<string, Intl.NumberFormat>();
const dateFormats = new Map<string, Intl.DateTimeFormat>();

function cached<T>(cache: Map<string, T>, key: string, build: () => T): T {
  let value = cache.get(key);
  if (value === undefined) {
    if (cache.size >= MAX_CACHED) cache.clear();
    value = build();
    cache.set(key, value);
  }
  return value;
}

/** Number of minor-unit digits of a currency: ISO 4217 first, then what Intl knows, else 2. */
export function currencyExponent(currency: string): number {
  const known = findCurrency(currency);
  if (known) return known.exponent;
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2;
  } catch {
    return 2;
  }
}

/** Minor units as an exact decimal string ("123456", 2 → "1234.56"); no floating point involved. */
export function minorToDecimal(minor: bigint, exponent: number): string {
  const negative = minor < 0n;
  const digits = (negative ? -minor : minor).toString().padStart(exponent + 1, '0');
  const whole = digits.slice(0, digits.length - exponent);
  const fraction = exponent > 0 ? `.${digits.slice(digits.length - exponent)}` : '';
  return `${negative ? '-' : ''}${whole}${fraction}`;
}

/**
 * Formats an amount in minor units for a locale, e.g. 123456n EUR in "de" →
 * "1.234,56 €", 1234n JPY → "¥1,234", 1234n KWD → "KWD 1.234". The decimal
 * string goes to Intl as is, so large amounts lose no precision.
 */
export function formatMoney(minor: bigint, currency: string, locale: string): string {
  const exponent = currencyExponent(currency);
  const decimal = minorToDecimal(minor, exponent);
  let format: Intl.NumberFormat | undefined;
  try {
    format = cached(numberFormats, `${locale}|${currency}`, () =>
      new Intl.NumberFormat(locale, { style: 'currency', currency, minimumFractionDigits: exponent, maximumFractionDigits: exponent }),
    );
  } catch {
    // Not a well-formed currency code: still show the amount, with the code as given.
    format = undefined;
  }
  // Intl accepts exact decimal strings (ES2023); the type definitions lag behind.
  return format ? format.format(decimal as unknown as number) : `${decimal} ${currency}`;
}

/** Formats an instant as a long date and short time in a locale and time zone (UTC unless given), with the zone named. */
export function formatDateTime(date: Date, locale: string, timeZone = 'UTC'): string {
  const format = cached(dateFormats, `${locale}|${timeZone}`, () =>
    new Intl.DateTimeFormat(locale, { dateStyle: 'long', timeStyle: 'short', timeZone }),
  );
  const text = format.format(date);
  return timeZone === 'UTC' ? `${text} UTC` : text;
}

/** Writes an IBAN in groups of four, as printed on statements ("DE89 3704 0044 …"). */
export function formatIban(iban: string): string {
  return iban.replace(/\s+/g, '').toUpperCase().replace(/(.{4})(?=.)/g, '$1 ');
}
