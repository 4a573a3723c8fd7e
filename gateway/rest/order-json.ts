import { create } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import {
  CreateOrderRequestSchema,
  OrderStatus,
  type CreateOrderRequest,
  type Order,
  type PaymentAttempt,
} from '../../src/gen/checkout/v1/order_pb.ts';
import { invalidParam } from './rest-error.ts';

/** An order as the REST API shows it: snake_case, amounts as JSON integers. */
export interface OrderJson {
  id: string;
  object: 'order';
  reference: string;
  amount: number;
  currency: string;
  status: string;
  checkout_url: string;
  line_items: { name: string; amount: number }[];
  return_url: string | null;
  method: string | null;
  settlement: { currency: string; amount: number } | null;
  refunds: never[];
  attempts: AttemptJson[];
  created: string;
  expires_at: string;
  livemode: boolean;
}

/** A payment attempt as the REST API shows it. */
export interface AttemptJson {
  id: string;
  method: string;
  route: string;
  status: string;
  decline_code: string | null;
  authentication: string;
  card_brand: string | null;
  card_last4: string | null;
  retry: boolean;
  created: string;
}

function isoOf(ts: Timestamp | undefined): string {
  return ts ? timestampDate(ts).toISOString() : '';
}

/** Maps a proto payment attempt to its REST JSON. */
export function attemptJson(attempt: PaymentAttempt): AttemptJson {
  return {
    id: attempt.id,
    method: attempt.method,
    route: attempt.route,
    status: attempt.status,
    decline_code: attempt.declineCode || null,
    authentication: attempt.authentication,
    card_brand: attempt.cardBrand || null,
    card_last4: attempt.cardLast4 || null,
    retry: attempt.retry,
    created: isoOf(attempt.created),
  };
}

type KnownStatus = (typeof OrderStatus)[Exclude<keyof typeof OrderStatus, 'UNSPECIFIED'>];

/** REST spelling of each order status; a status missing here fails the typecheck. */
const STATUS_JSON: { readonly [S in KnownStatus]: string } = {
  [OrderStatus.PENDING]: 'pending',
  [OrderStatus.PAID]: 'paid',
  [OrderStatus.EXPIRED]: 'expired',
  [OrderStatus.FAILED]: 'failed',
};

/**
 * REST spelling of an order status.
 * @throws Error for a status this gateway does not know (an older gateway before a newer core).
 */
export function statusJson(status: OrderStatus): string {
  const name = STATUS_JSON[status as KnownStatus];
  if (name === undefined) throw new Error(`unknown order status ${status}`);
  return name;
}

/** Maps the proto order to its REST JSON, field by field (never proto JSON). */
export function orderJson(order: Order): OrderJson {
  return {
    id: order.id,
    object: 'order',
    reference: order.reference,
    amount: Number(order.amount),
    currency: order.currency,
    status: statusJson(order.status),
    checkout_url: order.checkoutUrl,
    line_items: order.lineItems.map((item) => ({ name: item.name, amount: Number(item.amount) })),
    return_url: order.returnUrl ?? null,
    method: order.method ?? null,
    settlement: order.settlement ? { currency: order.settlement.currency, amount: Number(order.settlement.amount) } : null,
    refunds: [],
    attempts: order.attempts.map(attemptJson),
    created: isoOf(order.created),
    expires_at: isoOf(order.expiresAt),
    livemode: order.livemode,
  };
}

const CREATE_FIELDS = new Set(['amount', 'currency', 'reference', 'line_items', 'return_url', 'expires_at']);
const LINE_ITEM_FIELDS = new Set(['name', 'amount']);

/**
 * Checks the JSON shape of POST /v1/orders (types, unknown fields) and maps it
 * to the proto request. Value rules (currency, bounds, lengths) are the core's.
 * @throws RestError 400 naming the parameter at fault.
 */
export function createOrderRequestFromJson(body: unknown): CreateOrderRequest {
  const obj = jsonObject(body, 'body', 'The request body must be a JSON object, e.g. {"amount": 1000, "currency": "EUR", "reference": "order-1"}.');
  rejectUnknown(obj, CREATE_FIELDS, '');
  const lineItems = obj.line_items ?? [];
  if (!Array.isArray(lineItems)) throw invalidParam('parameter_invalid_array', 'line_items', 'line_items must be an array of {name, amount} objects.');
  return create(CreateOrderRequestSchema, {
    amount: requiredInteger(obj, 'amount', 'amount'),
    currency: requiredString(obj, 'currency', 'currency'),
    reference: requiredString(obj, 'reference', 'reference'),
    lineItems: lineItems.map((raw: unknown, i) => {
      const item = jsonObject(raw, `line_items[${i}]`, `line_items[${i}] must be an object with name and amount.`);
      rejectUnknown(item, LINE_ITEM_FIELDS, `line_items[${i}]`);
      return { name: requiredString(item, 'name', `line_items[${i}][name]`), amount: requiredInteger(item, 'amount', `line_items[${i}][amount]`) };
    }),
    returnUrl: optionalString(obj, 'return_url', 'return_url'),
    expiresAt: optionalTimestamp(obj, 'expires_at'),
  });
}

const ISO_8601 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function optionalTimestamp(obj: Record<string, unknown>, key: string): Timestamp | undefined {
  const value = optionalString(obj, key, key);
  if (value === undefined) return undefined;
  const date = new Date(value);
  if (!ISO_8601.test(value) || Number.isNaN(date.getTime())) {
    throw invalidParam('parameter_invalid_timestamp', key, `${key} must be an ISO 8601 date-time with a time zone, e.g. "2030-01-31T12:00:00Z".`);
  }
  return timestampFromDate(date);
}

function jsonObject(value: unknown, param: string, message: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw invalidParam('parameter_invalid_object', param, message);
  return value as Record<string, unknown>;
}

function rejectUnknown(obj: Record<string, unknown>, allowed: ReadonlySet<string>, prefix: string): void {
  for (const key of Object.keys(obj)) {
    if (!allowed.has(key)) {
      const param = prefix ? `${prefix}[${key}]` : key;
      throw invalidParam('parameter_unknown', param, `Received unknown parameter: ${param}. Known parameters: ${[...allowed].join(', ')}.`);
    }
  }
}

function requiredInteger(obj: Record<string, unknown>, key: string, param: string): bigint {
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

function requiredString(obj: Record<string, unknown>, key: string, param: string): string {
  const value = optionalString(obj, key, param);
  if (value === undefined) throw invalidParam('parameter_missing', param, `Missing required parameter: ${param}.`);
  return value;
}

function optionalString(obj: Record<string, unknown>, key: string, param: string): string | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  // A lone surrogate would be silently replaced by U+FFFD on the way to the core; refuse it here.
  if (typeof value !== 'string' || !value.isWellFormed()) throw invalidParam('parameter_invalid_string', param, `${param} must be a string of valid Unicode.`);
  return value;
}
