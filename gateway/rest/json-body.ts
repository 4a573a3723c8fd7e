import { timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
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

/** A required JSON integer within 2^53-1, as a bigint.
 * @throws RestError parameter_missing, parameter_invalid_integer or amount_too_large */
export function requiredInteger(obj: Record<string, unknown>, key: string, param: string): bigint {
  const value = obj[key];
  if (value === undefined || value === null) throw invalidParam('parameter_missing', param, `Missing required parameter: ${param}.`);
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw invalidParam('parameter_invalid_integer', param, `${param} must be an integer in minor units (e.g. 1050 for 10.50 EUR), not ${JSON.stringify(value)}.`);
  }
  if (!Number.isSafeInteger(value)) {
    throw invalidParam('amount_too_large', param, `${param} is above 2^53-1 and cannot be represented exactly in JSON.`);
  }
  return BigInt(value);
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
