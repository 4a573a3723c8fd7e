import { create } from '@bufbuild/protobuf';
import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import {
  CreateOrderRequestSchema,
  OrderStatus,
  type CreateOrderRequest,
  type Order,
  type PaymentAttempt,
} from '../../src/gen/checkout/v1/order_pb.ts';
import { invalidParam } from './rest-error.ts';
import { jsonObject, optionalString, optionalTimestamp, rejectUnknown, requiredInteger, requiredString } from './json-body.ts';

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
    amount: requiredInteger(obj, 'amount', 'amount', obj.currency),
    currency: requiredString(obj, 'currency', 'currency'),
    reference: requiredString(obj, 'reference', 'reference'),
    lineItems: lineItems.map((raw: unknown, i) => {
      const item = jsonObject(raw, `line_items[${i}]`, `line_items[${i}] must be an object with name and amount.`);
      rejectUnknown(item, LINE_ITEM_FIELDS, `line_items[${i}]`);
      return { name: requiredString(item, 'name', `line_items[${i}][name]`), amount: requiredInteger(item, 'amount', `line_items[${i}][amount]`, obj.currency) };
    }),
    returnUrl: optionalString(obj, 'return_url', 'return_url'),
    expiresAt: optionalTimestamp(obj, 'expires_at'),
  });
}
