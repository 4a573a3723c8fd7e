import { timestampDate, type Timestamp } from '@bufbuild/protobuf/wkt';
import { CaptureMethod, OrderStatus, type Order, type PaymentAttempt } from '../../../src/gen/checkout/v1/order_pb.ts';
import { refundJson, type RefundJson } from '../refunds/refund-json.ts';
import { disputeJson, type DisputeJson } from '../disputes/dispute-json.ts';

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
  refunds: RefundJson[];
  amount_refunded: number;
  capture_method: 'automatic' | 'manual';
  amount_captured: number | null;
  authorization_expires_at: string | null;
  disputes: DisputeJson[];
  attempts: AttemptJson[];
  created: string;
  expires_at: string;
  livemode: boolean;
  payment_link: string | null;
  subscription: string | null;
  subscription_cycle: number | null;
  customer: string | null;
  /** Only in the answer of the create that made the order. */
  client_secret?: string;
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
  card: string | null;
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
    card: attempt.cardId || null,
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
  [OrderStatus.PARTIALLY_REFUNDED]: 'partially_refunded',
  [OrderStatus.REFUNDED]: 'refunded',
  [OrderStatus.VOIDED]: 'voided',
  [OrderStatus.AUTHORIZED]: 'authorized',
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
    refunds: order.refunds.map(refundJson),
    amount_refunded: Number(order.amountRefunded),
    capture_method: order.captureMethod === CaptureMethod.MANUAL ? 'manual' : 'automatic',
    amount_captured: order.amountCaptured === undefined ? null : Number(order.amountCaptured),
    authorization_expires_at: order.authorizationExpiresAt ? isoOf(order.authorizationExpiresAt) : null,
    disputes: order.disputes.map(disputeJson),
    attempts: order.attempts.map(attemptJson),
    created: isoOf(order.created),
    expires_at: isoOf(order.expiresAt),
    livemode: order.livemode,
    payment_link: order.paymentLink ?? null,
    subscription: order.subscription ?? null,
    subscription_cycle: order.subscriptionCycle ?? null,
    customer: order.customer ?? null,
  };
}
