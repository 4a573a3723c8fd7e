import { timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { findCurrency } from '../../src/domain/money/currency.ts';
import { invalidParam } from './rest-error.ts';

// Shape checks of JSON request bodies, shared by every REST resource. Value rules are the core's.

/** The value as a JSON object.
 * @throws RestError parameter_invalid_object */
export function jsonObject(value: unknown, param: string, message: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParam('parameter_invalid_object', param, message);
  return value as Record<string, unknown>;
}

/** Refuses keys not in allowed, naming the first unknown one.
 * @throws RestError parameter_unknown */
export function rejectUnknown(obj: Record<string, unknown>, allowed: ReadonlySet<string>, prefix: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) {
      const param = prefix ? `${prefix}[${key}]` : key;
      throw invalidParam('parameter_unknown', param, `Received unknown parameter: ${param}. Known parameters: ${[...allowed].join(', ')}.`);
    }
  }
}

/**
 * A required amount: a JSON integer within 2^53-1, in minor units of `currency` (the body's own field,
 * unchecked; it only words the error), as a bigint.
 * @throws RestError parameter_missing, parameter_invalid_integer or amount_too_large */
export function requiredInteger(obj: Record<string, unknown>, key: string, param: string, currency?: unknown): bigint {
  const value = obj[key];
  if (value === undefined || value === null) throw invalidParam('parameter_missing', param, `Missing required parameter: ${param}.`);
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw invalidParam('parameter_invalid_integer', param, `${param} must be an integer number of minor units: ${typeof value === 'number' ? String(value) : JSON.stringify(value)} is not; ${minorUnitExample(value, currency)}.`);
  }
  if (!Number.isSafeInteger(value)) {
    throw invalidParam('amount_too_large', param, `${param} is above 2^53-1 and cannot be represented exactly in JSON.`);
  }
  return BigInt(value);
}

/**
 * The minor-unit rule worked for the currency the body names, when it names a known one (JSON cannot
 * tell 25.00 from 25, so the rule is what a caller sending major units needs to see).
 */
function minorUnitExample(value: unknown, currency: unknown): string {
  const known = typeof currency === 'string' ? findCurrency(currency.toUpperCase()) : undefined;
  if (!known) return "the currency's ISO 4217 exponent decides, e.g. 10.50 EUR is 1050 and 1050 JPY is 1050";
  const { code, exponent } = known;
  const numeric = typeof value === 'number' && Number.isFinite(value) ? value : undefined;
  if (exponent === 0) {
    const whole = numeric !== undefined && Math.abs(numeric) >= 1 ? Math.trunc(numeric) : 1050;
    return `${code} has no minor unit, so ${whole} ${code} is ${whole}`;
  }
  // The caller's own number read as major units, when it has no more decimals than the currency.
  const scaled = numeric === undefined ? undefined : numeric * 10 ** exponent;
  const exact = scaled !== undefined && Number.isSafeInteger(Math.round(scaled)) && Math.abs(scaled - Math.round(scaled)) < 1e-6;
  const major = exact && numeric !== undefined ? numeric : 10.5;
  return `for ${code}, ${major.toFixed(exponent)} ${code} is ${Math.round(major * 10 ** exponent)}`;
}

/** A required string of valid Unicode.
 * @throws RestError parameter_missing or parameter_invalid_string */
export function requiredString(obj: Record<string, unknown>, key: string, param: string): string {
  const value = optionalString(obj, key, param);
  if (value === undefined) throw invalidParam('parameter_missing', param, `Missing required parameter: ${param}.`);
  return value;
}

/** An optional string of valid Unicode (null counts as absent).
 * @throws RestError parameter_invalid_string */
export function optionalString(obj: Record<string, unknown>, key: string, param: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  // A lone surrogate would be silently replaced by U+FFFD on the way to the core; refuse it here.
  if (typeof value !== 'string' || !value.isWellFormed()) throw invalidParam('parameter_invalid_string', param, `${param} must be a string of valid Unicode.`);
  return value;
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** An optional ISO 8601 date-time with a zone.
 * @throws RestError parameter_invalid_timestamp */
export function optionalTimestamp(obj: Record<string, unknown>, key: string): Timestamp | undefined {
  const value = optionalString(obj, key, key);
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!ISO_8601.test(value) || Number.isNaN(date.getTime())) {
    throw invalidParam('parameter_invalid_timestamp', key, `${key} must be an ISO 8601 date-time with a time zone, e.g. "2030-01-31T12:00:00Z".`);
  }
  return timestampFromDate(date);
}
