// Medusa 2 keeps amounts in major units as decimals (25.99 USD is 25.99, a BigNumber in its database);
// the service takes integers in minor units (2599). Converted here on decimal strings, never through a
// float product, with the currency's ISO 4217 exponent.
import type { BigNumberInput } from '@medusajs/framework/types';

/**
 * ISO 4217 currencies whose exponent is not 2 (the service's own table, src/kernel/domain/currency.ts;
 * test/medusa-provider.test.ts holds the two equal).
 */
export const EXPONENT_OVERRIDES: Readonly<Record<string, number>> = {
  BIF: 0, CLP: 0, DJF: 0, GNF: 0, ISK: 0, JPY: 0, KMF: 0, KRW: 0, PYG: 0, RWF: 0, UGX: 0,
  UYI: 0, VND: 0, VUV: 0, XAF: 0, XOF: 0, XPF: 0,
  BHD: 3, IQD: 3, JOD: 3, KWD: 3, LYD: 3, OMR: 3, TND: 3,
  CLF: 4, UYW: 4,
};

/** The number of minor-unit digits of a currency (uppercase or lowercase ISO 4217 code): 2 unless listed. */
export function currencyExponent(currency: string): number {
  return EXPONENT_OVERRIDES[currency.toUpperCase()] ?? 2;
}

/**
 * The decimal text of a Medusa amount: a number, a decimal string, a BigNumber of Medusa's (its `raw`),
 * a raw value `{ value }` as Medusa stores it, or a bignumber.js instance.
 * @throws TypeError for anything else
 */
export function decimalText(amount: BigNumberInput): string {
  if (typeof amount === 'number') {
    if (!Number.isFinite(amount)) throw new TypeError(`amount must be a finite number; got ${amount}.`);
    return String(amount);
  }
  if (typeof amount === 'string') return amount.trim();
  if (typeof amount === 'object' && amount !== null) {
    const object = amount as { raw?: { value?: unknown }; value?: unknown; toFixed?: () => string };
    // Medusa's BigNumber keeps its exact value in raw.value; a raw value (as in raw_amount) is { value, precision }.
    if (object.raw && (typeof object.raw.value === 'string' || typeof object.raw.value === 'number')) return String(object.raw.value);
    if (typeof object.value === 'string' || typeof object.value === 'number') return String(object.value);
    // bignumber.js: toFixed() without digits is the exact value, never exponent notation.
    if (typeof object.toFixed === 'function') return object.toFixed();
  }
  throw new TypeError(`amount must be a number, a decimal string or a BigNumber; got ${JSON.stringify(amount)}.`);
}

/**
 * Minor units of a Medusa amount in a currency, rounded half up to the currency's exponent (Medusa's
 * totals may carry more decimals than the currency has, from tax rates).
 * @throws RangeError when the amount is negative, not a decimal, or past Number.MAX_SAFE_INTEGER minor units
 */
export function toMinorUnits(amount: BigNumberInput, currency: string): number {
  const text = decimalText(amount);
  const match = /^(\+)?(\d*)(?:\.(\d*))?(?:e([+-]?\d+))?$/i.exec(text);
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new RangeError(`${JSON.stringify(text)} is not a non-negative decimal amount.`);
  // The digits and where the decimal point falls among them, exponent notation (1e-7, 2.5e+21) included.
  const digits = `${match[2]}${match[3] ?? ''}`;
  const point = match[2]!.length + Number(match[4] ?? 0) + currencyExponent(currency);
  let whole: bigint;
  if (point <= 0) {
    whole = 0n;
  } else if (point >= digits.length) {
    whole = BigInt(digits + '0'.repeat(point - digits.length));
  } else {
    whole = BigInt(digits.slice(0, point));
    if (Number(digits[point]) >= 5) whole += 1n;
  }
  if (whole > BigInt(Number.MAX_SAFE_INTEGER)) throw new RangeError(`${text} ${currency} is too large an amount.`);
  return Number(whole);
}

/** The decimal text, in major units, of an integer amount of minor units (2599 USD is "25.99"). */
export function fromMinorUnits(minor: number, currency: string): string {
  if (!Number.isSafeInteger(minor) || minor < 0) throw new RangeError(`${minor} is not an amount in minor units.`);
  const exponent = currencyExponent(currency);
  if (exponent === 0) return String(minor);
  const text = String(minor).padStart(exponent + 1, '0');
  const major = `${text.slice(0, -exponent)}.${text.slice(-exponent)}`.replace(/\.?0+$/, '');
  return major;
}
