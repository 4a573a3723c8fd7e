import type { Money } from '../../../kernel/domain/money.ts';
import { orderEvent, type DomainEvent, type EventType, type JsonValue } from '../../event/domain/domain-event.ts';
import { DECLINES, type DeclineCode } from '../../payment/domain/decline-code.ts';
import type { CancellationReason, PaymentMethod } from '../../payment/domain/payment-attempt.entity.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { Order, OrderStatus } from './order.entity.ts';

/** The result of a state change: the order at its next version and the event that tells of it. */
export interface Transition {
  readonly order: Order;
  readonly event: DomainEvent;
}

/** Which state changes are allowed. expired, refunded and voided are final. */
const ALLOWED: { readonly [From in OrderStatus]: readonly OrderStatus[] } = {
  pending: ['paid', 'authorized', 'failed', 'expired'],
  failed: ['paid', 'authorized', 'failed', 'expired'],
  authorized: ['paid', 'voided'],
  paid: ['partially_refunded', 'refunded', 'voided'],
  partially_refunded: ['partially_refunded', 'refunded'],
  expired: [],
  refunded: [],
  voided: [],
};

function transition(order: Order, to: OrderStatus, changes: Partial<Order>, type: EventType, data: { [key: string]: JsonValue }, ids: { eventId: string; now: Date }): Transition {
  if (!ALLOWED[order.status].includes(to)) {
    throw new Error(`illegal order transition ${order.status} -> ${to} for ${order.id}`);
  }
  return nextVersion({ ...order, ...changes, status: to }, type, data, ids);
}

/** The order at its next version, and the event about it (sequence = that version). */
function nextVersion(changed: Order, type: EventType, data: { [key: string]: JsonValue }, ids: { eventId: string; now: Date }): Transition {
  const next: Order = { ...changed, version: changed.version + 1 };
  return { order: next, event: orderEvent(next, type, data, ids) };
}

/**
 * Whether the order takes a payment now.
 * @throws DomainError checkout.already_paid or checkout.expired
 */
export function assertPayable(order: Order, now: Date): void {
  if (isPaid(order)) throw new DomainError('checkout.already_paid', 'This order has already been paid.');
  if (order.status === 'expired' || now >= order.expiresAt) throw new DomainError('checkout.expired', 'This checkout has expired.');
}

/** True while the order can still take a payment (expired and paid orders cannot). */
export function takesPayment(order: Pick<Order, 'status'>): boolean {
  return order.status === 'pending' || order.status === 'failed';
}

/**
 * True once the customer's payment went through: the order was paid (refunded in part or in whole
 * since or not, or voided), or authorized for a manual capture. It takes no second payment.
 */
export function isPaid(order: Pick<Order, 'status'>): boolean {
  return order.status === 'paid' || order.status === 'authorized' || order.status === 'partially_refunded' || order.status === 'refunded' || order.status === 'voided';
}

/** Why an order can no longer take the payment an attempt was making. */
export function reasonOrderRefuses(order: Pick<Order, 'status'>): 'order_paid' | 'order_expired' {
  return isPaid(order) ? 'order_paid' : 'order_expired';
}

/** True when the order is still open but past its expiry time. */
export function isDueToExpire(order: Order, now: Date): boolean {
  return (order.status === 'pending' || order.status === 'failed') && now >= order.expiresAt;
}

/**
 * pending|failed → paid (automatic capture), or authorized → paid (a manual capture of `captured`,
 * the whole amount when absent), with order.paid carrying exactly the spec's fields; a manual
 * order's also carries amount_captured.
 */
export function markPaid(order: Order, payment: { method: PaymentMethod; settlement: Money; captured?: bigint }, ids: { eventId: string; now: Date }): Transition {
  const captured = payment.captured ?? order.amount;
  if (captured <= 0n || captured > order.amount) throw new Error(`capture of ${captured} does not fit order ${order.id} of ${order.amount}`);
  return transition(
    order,
    'paid',
    { method: payment.method, settlement: payment.settlement, amountCaptured: captured, authorizationExpiresAt: null },
    'order.paid',
    {
      id: order.id,
      reference: order.reference,
      amount: Number(order.amount),
      currency: order.currency,
      method: payment.method,
      settlement: { currency: payment.settlement.currency, amount: Number(payment.settlement.amount) },
      ...(order.captureMethod === 'manual' ? { amount_captured: Number(captured) } : {}),
      // Only an order a payment link created names it, so that order.paid of other orders keeps its fields.
      ...(order.paymentLinkId ? { payment_link: order.paymentLinkId } : {}),
      ...(order.subscriptionId ? { subscription: order.subscriptionId, subscription_cycle: order.subscriptionCycle ?? null } : {}),
    },
    ids,
  );
}

/**
 * pending|failed → authorized: a manual order's payment was authorized, nothing captured.
 * order.authorized carries order.paid's fields (no settlement yet: nothing is owed), the amount
 * authorized, and when the authorization is released unless captured.
 */
export function markAuthorized(order: Order, payment: { method: PaymentMethod; expiresAt: Date }, ids: { eventId: string; now: Date }): Transition {
  if (order.captureMethod !== 'manual') throw new Error(`order ${order.id} captures automatically: it is never left authorized`);
  return transition(
    order,
    'authorized',
    { method: payment.method, authorizationExpiresAt: payment.expiresAt },
    'order.authorized',
    {
      id: order.id,
      reference: order.reference,
      amount: Number(order.amount),
      currency: order.currency,
      method: payment.method,
      amount_authorized: Number(order.amount),
      authorization_expires_at: payment.expiresAt.toISOString(),
    },
    ids,
  );
}

/** pending|failed → failed, with order.failed carrying a reason an operator can act on. */
export function markFailed(
  order: Order,
  failure: { declineCode: DeclineCode; route: string; retried: boolean; attemptId: string; method: PaymentMethod },
  ids: { eventId: string; now: Date },
): Transition {
  return transition(
    order,
    'failed',
    {},
    'order.failed',
    {
      id: order.id,
      reference: order.reference,
      amount: Number(order.amount),
      currency: order.currency,
      reason: {
        decline_code: failure.declineCode,
        message: DECLINES[failure.declineCode].operatorMessage,
        route: failure.route,
        retried: failure.retried,
        attempt_id: failure.attemptId,
        method: failure.method,
      },
    },
    ids,
  );
}

/** pending|failed → expired. */
export function markExpired(order: Order, ids: { eventId: string; now: Date }): Transition {
  return transition(
    order,
    'expired',
    {},
    'order.expired',
    { id: order.id, reference: order.reference, amount: Number(order.amount), currency: order.currency, expires_at: order.expiresAt.toISOString() },
    ids,
  );
}

/** What was undone: a capture the order could not take. */
export interface Reversal {
  readonly attemptId: string;
  readonly method: PaymentMethod;
  readonly route: string;
  readonly reason: CancellationReason;
}

/**
 * Records on the order (whatever its state) that a capture it could not take
 * was reversed at the acquirer: the order's version moves on, its status does
 * not, and order.payment_reversed tells the operator and the merchant.
 */
export function noteReversal(order: Order, reversal: Reversal, ids: { eventId: string; now: Date }): Transition {
  return nextVersion(
    order,
    'order.payment_reversed',
    {
      id: order.id,
      reference: order.reference,
      amount: Number(order.amount),
      currency: order.currency,
      status: order.status,
      reversal: {
        attempt_id: reversal.attemptId,
        method: reversal.method,
        route: reversal.route,
        reason: reversal.reason,
        message: REVERSAL_MESSAGES[reversal.reason],
      },
    },
    ids,
  );
}

const REVERSAL_MESSAGES: { readonly [R in CancellationReason]: string } = {
  order_paid: 'The order was paid another way while this payment was being captured; the capture was reversed, so the customer is not charged twice.',
  order_expired: 'The order expired while this payment was being captured; the capture was reversed.',
  attempt_abandoned: 'The process handling this payment stopped before recording it; whatever the acquirer authorized or captured was reversed.',
  order_voided: 'The merchant voided the order before settlement; the capture was reversed.',
  authorization_expired: 'The authorization was not captured in time and was released.',
};

/** What a succeeded refund tells of itself on order.refunded. */
export interface RefundFacts {
  readonly id: string;
  readonly amount: bigint;
  readonly currency: string;
  readonly reason: string;
  readonly note: string;
}

/**
 * paid|partially_refunded → partially_refunded|refunded as a refund succeeds; order.refunded
 * carries the order, the refund and amount_refunded.
 */
export function noteRefund(order: Order, refund: RefundFacts, ids: { eventId: string; now: Date }): Transition {
  const amountRefunded = order.amountRefunded + refund.amount;
  const captured = capturedAmount(order);
  if (amountRefunded > captured) throw new Error(`refunds of ${order.id} would exceed what was captured`);
  return transition(
    order,
    amountRefunded === captured ? 'refunded' : 'partially_refunded',
    { amountRefunded },
    'order.refunded',
    {
      id: order.id,
      reference: order.reference,
      amount: Number(order.amount),
      currency: order.currency,
      amount_refunded: Number(amountRefunded),
      refund: { id: refund.id, amount: Number(refund.amount), currency: refund.currency, reason: refund.reason, note: refund.note === '' ? null : refund.note },
    },
    ids,
  );
}

/** Why an authorized order was voided: the merchant asked, or the authorization was not captured in time. */
export type AuthorizationRelease = 'requested' | 'authorization_expired';

/**
 * paid → voided before settlement, or authorized → voided when the authorization is released:
 * order.voided carries the order's id, reference, amount and currency, and for a released
 * authorization also `reason` (requested or authorization_expired).
 */
export function markVoided(order: Order, ids: { eventId: string; now: Date }, release?: AuthorizationRelease): Transition {
  if ((order.status === 'authorized') !== (release !== undefined)) throw new Error(`void of ${order.id} (${order.status}) needs a release reason exactly when authorized`);
  // Nothing is owed to the merchant any more: the order shows no settlement.
  return transition(
    order,
    'voided',
    { settlement: null, authorizationExpiresAt: null },
    'order.voided',
    { id: order.id, reference: order.reference, amount: Number(order.amount), currency: order.currency, ...(release ? { reason: release } : {}) },
    ids,
  );
}

/** What refunds are bounded by: the amount captured (the order's amount for a capture recorded before amount_captured existed). */
export function capturedAmount(order: Pick<Order, 'amount' | 'amountCaptured'>): bigint {
  return order.amountCaptured ?? order.amount;
}
