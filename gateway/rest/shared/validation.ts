import type { FastifyServerOptions } from 'fastify';
import { Ajv, type ValidateFunction } from 'ajv';
import { findCurrency } from '../../../src/kernel/domain/currency.ts';
import { invalidParam, type RestError } from './rest-error.ts';
import { ALLOWED_NOTE, AMOUNT_NOTE, ERROR_NOTE, OPTIONAL_BODY_NOTE, type ErrorNote } from './schemas.ts';

// Fastify validates each REST request with its route's schema (schemas.ts). This file sets up its
// Ajv and turns Ajv's errors into ours: the same codes, params and messages the hand checks gave.

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** An ISO 8601 date-time with a zone that names a real day and time (2030-02-31 and 24:30 do not: Date would roll them over). */
function isDateTime(value: string): boolean {
  if (!ISO_8601.test(value) || Number.isNaN(new Date(value).getTime())) return false;
  const [year, month, day] = value.slice(0, 10).split('-').map(Number) as [number, number, number];
  const [hour, minute] = value.slice(11, 16).split(':').map(Number) as [number, number];
  const calendar = new Date(Date.UTC(year, month - 1, day));
  return calendar.getUTCFullYear() === year && calendar.getUTCMonth() === month - 1 && calendar.getUTCDate() === day && hour < 24 && minute < 60;
}

interface AjvLike {
  addKeyword(definition: { keyword: string; schemaType?: string | string[] }): unknown;
  addFormat(name: string, format: { type: 'string'; validate: (value: string) => boolean }): unknown;
}

/** Our annotations allowed as keywords, and our date-time format (not ajv-formats' RFC 3339: seconds optional, as the hand checks accepted). */
function extend(ajv: unknown): void {
  const it = ajv as AjvLike;
  it.addKeyword({ keyword: ERROR_NOTE, schemaType: 'object' });
  it.addKeyword({ keyword: AMOUNT_NOTE, schemaType: 'boolean' });
  it.addKeyword({ keyword: OPTIONAL_BODY_NOTE, schemaType: 'boolean' });
  it.addKeyword({ keyword: ALLOWED_NOTE, schemaType: 'array' });
  it.addFormat('date-time', { type: 'string', validate: isDateTime });
}

/** How both validators judge: JSON as it came (no coercion of "1" to 1, no removal of unknown fields, no defaults), and Infinity is not a number. */
const JUDGE_AS_SENT = { coerceTypes: false, removeAdditional: false, useDefaults: false, strictNumbers: true } as const;

/**
 * Fastify's Ajv: stops at the first error, so a request that fails costs little before its
 * credentials are judged. Which error to tell is {@link schemaErrors}' to find, afterwards.
 */
export const AJV_OPTIONS: NonNullable<FastifyServerOptions['ajv']> = {
  customOptions: { ...JUDGE_AS_SENT, allErrors: false },
  onCreate: extend,
};

/** A second Ajv that reports every error with its schema, for the request's own error message. */
const reporting = new Ajv({ ...JUDGE_AS_SENT, allErrors: true, verbose: true, strict: false });
extend(reporting);
const reporters = new WeakMap<object, ValidateFunction>();

/**
 * Every error of `value` against `schema`: run only for a request that failed Fastify's validation
 * and whose credentials passed (an anonymous caller cannot make us enumerate a huge body's errors).
 */
export function schemaErrors(schema: Record<string, unknown>, value: unknown): SchemaError[] {
  let validate = reporters.get(schema);
  if (!validate) {
    validate = reporting.compile(schema);
    reporters.set(schema, validate);
  }
  return validate(value) ? [] : ((validate.errors ?? []) as SchemaError[]);
}

/** The part of an Ajv error we read (verbose mode). */
export interface SchemaError {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  data?: unknown;
  parentSchema?: Record<string, unknown>;
}

/** `/line_items/0/name` as the API names it: `line_items[0][name]`. */
function paramName(segments: readonly string[]): string {
  const [first, ...rest] = segments;
  return (first ?? '') + rest.map((s) => `[${s}]`).join('');
}

function segmentsOf(error: SchemaError): string[] {
  const path = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
  if (error.keyword === 'required') path.push(String(error.params.missingProperty));
  if (error.keyword === 'additionalProperties') path.push(String(error.params.additionalProperty));
  return path;
}

/**
 * The order in which the hand checks used to report: an unknown field first, then field by field
 * in the order the schema declares them (within a field, an unknown nested field first), so that
 * `{"amount": 25.5}` is told about its amount before its missing currency.
 */
function rank(error: SchemaError, rootOrder: readonly string[]): [number, number, number] {
  const segments = segmentsOf(error);
  if (segments.length === 0) return [-2, 0, 0];
  const unknown = error.keyword === 'additionalProperties';
  if (unknown && segments.length === 1) return [-1, 0, 0];
  const position = rootOrder.indexOf(segments[0]!);
  const item = Number(segments[1] ?? 0);
  return [position < 0 ? rootOrder.length : position, Number.isInteger(item) ? item : 0, unknown ? 0 : 1];
}

function compareRanks(a: [number, number, number], b: [number, number, number]): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/**
 * The one error to tell about a request that failed its schema, in our words.
 * @param part which part of the request: 'body' or 'querystring'
 * @param body the request's body, for the minor-unit rule of its currency
 * @param rootSchema the schema of that part, for the order of its fields and the names of known ones
 */
export function toParamError(errors: readonly SchemaError[], part: string, body: unknown, rootSchema: Record<string, unknown> | undefined): RestError {
  const rootOrder = Object.keys((rootSchema?.properties as Record<string, unknown> | undefined) ?? {});
  const ranked = errors.map((error, i) => ({ error, key: rank(error, rootOrder), i }));
  ranked.sort((a, b) => compareRanks(a.key, b.key) || a.i - b.i);
  const error = ranked[0]!.error;
  const segments = segmentsOf(error);
  const param = segments.length === 0 ? 'body' : paramName(segments);
  const query = part === 'querystring';

  if (error.keyword === 'additionalProperties') {
    const known = Object.keys((error.parentSchema?.properties as Record<string, unknown> | undefined) ?? {}).join(', ');
    if (known === '') return invalidParam('parameter_unknown', param, `Received unknown ${query ? 'query ' : ''}parameter: ${param}. This call takes none.`);
    return query
      ? invalidParam('parameter_unknown', param, `Received unknown query parameter: ${param}. Known: ${known}.`)
      : invalidParam('parameter_unknown', param, `Received unknown parameter: ${param}. Known parameters: ${known}.`);
  }
  // A required field that is absent, or null (which the API reads as absent).
  const property = segments.length > 0 && !/^\d+$/.test(segments[segments.length - 1]!);
  if (error.keyword === 'required' || (error.keyword === 'type' && error.data === null && property)) {
    // A parameter from a closed list: say which values it takes, so the next request can be right.
    const schema = error.keyword === 'required' ? (error.parentSchema?.properties as Record<string, Record<string, unknown>> | undefined)?.[segments[segments.length - 1]!] : error.parentSchema;
    const allowed = schema?.[ALLOWED_NOTE] as readonly string[] | undefined;
    return invalidParam('parameter_missing', param, `Missing required parameter: ${param}.${allowed ? ` It must be one of ${allowed.join(', ')}.` : ''}`);
  }
  if (error.parentSchema?.[AMOUNT_NOTE] === true) return amountError(param, error, body);
  const note = error.parentSchema?.[ERROR_NOTE] as ErrorNote | undefined;
  if (note) return invalidParam(note.code, param, note.message.replaceAll('{param}', param).replaceAll('{list}', paramName(segments.slice(0, -1))));
  return invalidParam('parameter_invalid', param, `${param} is not valid here.`);
}

/**
 * An amount that is not a safe integer: above 2^53-1 it cannot be read exactly; otherwise it is
 * not a whole number of minor units, and the message works the rule for the body's currency.
 */
function amountError(param: string, error: SchemaError, body: unknown): RestError {
  const value = error.data;
  if (error.keyword === 'maximum') {
    return invalidParam('amount_too_large', param, `${param} is above 2^53-1 and cannot be represented exactly in JSON.`);
  }
  const currency = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).currency : undefined;
  const shown = typeof value === 'number' ? String(value) : JSON.stringify(value);
  return invalidParam('parameter_invalid_integer', param, `${param} must be an integer number of minor units: ${shown} is not; ${minorUnitExample(value, currency)}.`);
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
