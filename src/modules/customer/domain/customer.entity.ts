import { invalid } from '../../../kernel/domain/domain-error.ts';
import { parseText } from '../../../kernel/domain/text.ts';

/** Prefix of customer ids. */
export const CUSTOMER_ID_PREFIX = 'cus_';

/** Most metadata keys one customer may carry, and the longest key and value (Stripe's limits). */
export const MAX_METADATA_KEYS = 50;
export const MAX_METADATA_KEY_LENGTH = 40;
export const MAX_METADATA_VALUE_LENGTH = 500;

/** A merchant's customer: whom saved cards belong to and whom orders may name. */
export interface Customer {
  /** "cus_" + opaque suffix. */
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly email: string | null;
  readonly name: string | null;
  /** The merchant's own id for the customer. */
  readonly reference: string | null;
  readonly metadata: Readonly<Record<string, string>>;
  /** The test clock the customer (and its subscriptions) run on; absent or null on the real time. */
  readonly testClockId?: string | null;
  readonly createdAt: Date;
  readonly updatedAt: Date;
}

/** The merchant's fields of a customer, as sent; undefined leaves a field as it is (on update), "" clears it. */
export interface CustomerFields {
  readonly email?: string | undefined;
  readonly name?: string | undefined;
  readonly reference?: string | undefined;
  /** Replaces every key when given; a key with an empty value is removed (on update). */
  readonly metadata?: Readonly<Record<string, string>> | undefined;
}

/** The validated fields: null clears, undefined keeps. */
export interface CustomerChanges {
  readonly email?: string | null;
  readonly name?: string | null;
  readonly reference?: string | null;
  readonly metadata?: Readonly<Record<string, string>>;
}

// Deliberately loose (one @, no spaces, a dot in the domain): the merchant owns its customers' addresses.
const EMAIL = /^[^\s@]{1,64}@[^\s@]+\.[^\s@]+$/;

function optionalText(value: string | undefined, param: string, max: number): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === '') return null;
  return parseText(value, param, 'customer.field_invalid', max);
}

/**
 * Validates a customer's fields. Metadata: at most 50 keys of 1 to 40 characters, values of at most
 * 500 characters; on update an empty value removes its key.
 * @throws DomainError customer.field_invalid or customer.metadata_invalid naming the parameter
 */
export function parseCustomerFields(fields: CustomerFields): CustomerChanges {
  const email = optionalText(fields.email, 'email', 512);
  if (email && !EMAIL.test(email)) throw invalid('customer.field_invalid', 'email', 'email must be an address such as "ada@example.com".');
  const changes: { -readonly [K in keyof CustomerChanges]: CustomerChanges[K] } = {};
  if (email !== undefined) changes.email = email;
  const name = optionalText(fields.name, 'name', 200);
  if (name !== undefined) changes.name = name;
  const reference = optionalText(fields.reference, 'reference', 255);
  if (reference !== undefined) changes.reference = reference;
  if (fields.metadata !== undefined) changes.metadata = parseMetadata(fields.metadata);
  return changes;
}

/**
 * Checks a metadata map.
 * @throws DomainError customer.metadata_invalid
 */
export function parseMetadata(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_KEYS) throw invalid('customer.metadata_invalid', 'metadata', `metadata may hold at most ${MAX_METADATA_KEYS} keys.`);
  const out: Record<string, string> = {};
  for (const [key, value] of entries) {
    const param = `metadata[${key.slice(0, MAX_METADATA_KEY_LENGTH)}]`;
    if (key.length === 0 || [...key].length > MAX_METADATA_KEY_LENGTH || !key.isWellFormed() || key.includes('\u0000') || key.includes('[') || key.includes(']')) {
      throw invalid('customer.metadata_invalid', 'metadata', `metadata keys must be 1 to ${MAX_METADATA_KEY_LENGTH} characters without square brackets.`);
    }
    if ([...value].length > MAX_METADATA_VALUE_LENGTH || !value.isWellFormed() || value.includes('\u0000')) {
      throw invalid('customer.metadata_invalid', param, `${param} must be text of at most ${MAX_METADATA_VALUE_LENGTH} characters.`);
    }
    out[key] = value;
  }
  return out;
}

/** A new customer from validated fields. */
export function newCustomer(input: { readonly id: string; readonly merchantId: string; readonly livemode: boolean; readonly fields: CustomerChanges; readonly now: Date; readonly testClockId?: string | null }): Customer {
  const { fields } = input;
  return {
    testClockId: input.testClockId ?? null,
    id: input.id,
    merchantId: input.merchantId,
    livemode: input.livemode,
    email: fields.email ?? null,
    name: fields.name ?? null,
    reference: fields.reference ?? null,
    metadata: withoutEmptyValues(fields.metadata ?? {}),
    createdAt: input.now,
    updatedAt: input.now,
  };
}

/** The customer with changes applied: metadata keys merged, an empty value removing its key (as Stripe). */
export function updateCustomer(customer: Customer, changes: CustomerChanges, now: Date): Customer {
  const metadata = changes.metadata === undefined ? customer.metadata : withoutEmptyValues({ ...customer.metadata, ...changes.metadata });
  if (Object.keys(metadata).length > MAX_METADATA_KEYS) throw invalid('customer.metadata_invalid', 'metadata', `metadata may hold at most ${MAX_METADATA_KEYS} keys.`);
  return {
    ...customer,
    email: changes.email === undefined ? customer.email : changes.email,
    name: changes.name === undefined ? customer.name : changes.name,
    reference: changes.reference === undefined ? customer.reference : changes.reference,
    metadata,
    updatedAt: now,
  };
}

function withoutEmptyValues(metadata: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(metadata).filter(([, value]) => value !== ''));
}
