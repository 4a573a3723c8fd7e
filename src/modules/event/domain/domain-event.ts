import type { Order } from '../../order/domain/order.entity.ts';

/**
 * Every event type, past tense and dotted: those emitted today and those the
 * next capabilities will emit (refunds, disputes, payouts, subscriptions),
 * which an endpoint may already subscribe to.
 */
export const EVENT_TYPES = [
  'order.created',
  'order.paid',
  'order.authorized',
  'order.failed',
  'order.expired',
  'order.payment_reversed',
  'order.refunded',
  'order.voided',
  'order.disputed',
  'dispute.funds_withdrawn',
  'dispute.updated',
  'dispute.funds_reinstated',
  'dispute.closed',
  'payout.settled',
  'payout.paid',
  'payout.failed',
  'subscription.created',
  'subscription.charged',
  'subscription.payment_failed',
  'subscription.updated',
  'subscription.paused',
  'subscription.resumed',
  'subscription.canceled',
  'payment_link.completed',
  'payment_link.deactivated',
  'test_clock.ready',
] as const;

/** An event's type. */
export type EventType = (typeof EVENT_TYPES)[number];

/** What an event can be about. */
export const SUBJECT_TYPES = ['order', 'payment', 'refund', 'dispute', 'payout', 'customer', 'subscription', 'payment_link', 'test_clock'] as const;

/** The kind of thing an event is about. */
export type SubjectType = (typeof SUBJECT_TYPES)[number];

/** The thing an event is about, by type and id; its events are numbered per subject. */
export interface EventSubject {
  readonly type: SubjectType;
  readonly id: string;
}

/** Prefix of every event id. */
export const EVENT_ID_PREFIX = 'evt_';

/** JSON value as carried in an event's data. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Something that happened to a subject (an order, a payout, …), written to
 * the outbox in the same transaction as the change and published later with
 * msgID = id.
 */
export interface DomainEvent {
  /** "evt_" + opaque suffix, identical across redeliveries. */
  readonly id: string;
  readonly type: EventType;
  readonly merchantId: string;
  readonly livemode: boolean;
  /** What the event is about. */
  readonly subject: EventSubject;
  /** The order the event belongs to, when it belongs to one (every order event, a refund's); null otherwise (a payout's). */
  readonly orderId: string | null;
  /** The merchant's order reference, on every event that has an order. */
  readonly reference: string | null;
  /** Per-subject sequence number (the subject's version after the change), so receivers drop stale events. */
  readonly sequence: number;
  readonly createdAt: Date;
  readonly data: { [key: string]: JsonValue };
}

/**
 * The public shape of an order inside event data: snake_case, amounts as JSON
 * integers (every amount we accept is below 2^53).
 */
export function orderEventData(order: Order): { [key: string]: JsonValue } {
  return {
    id: order.id,
    reference: order.reference,
    amount: Number(order.amount),
    currency: order.currency,
    status: order.status,
    line_items: order.lineItems.map((item) => ({ name: item.name, amount: Number(item.amount) })),
    return_url: order.returnUrl,
    checkout_url: order.checkoutUrl,
    livemode: order.livemode,
    created: order.createdAt.toISOString(),
    expires_at: order.expiresAt.toISOString(),
    ...(order.paymentLinkId ? { payment_link: order.paymentLinkId } : {}),
    ...(order.subscriptionId ? { subscription: order.subscriptionId, subscription_cycle: order.subscriptionCycle ?? null } : {}),
    ...(order.customerId ? { customer: order.customerId } : {}),
  };
}

/** Makes an event about an order: the order is its subject, and its id and reference ride along. */
export function orderEvent(
  order: Pick<Order, 'id' | 'merchantId' | 'livemode' | 'reference' | 'version'>,
  type: EventType,
  data: { [key: string]: JsonValue },
  ids: { readonly eventId: string; readonly now: Date },
): DomainEvent {
  return {
    id: ids.eventId,
    type,
    merchantId: order.merchantId,
    livemode: order.livemode,
    subject: { type: 'order', id: order.id },
    orderId: order.id,
    reference: order.reference,
    sequence: order.version,
    createdAt: ids.now,
    data,
  };
}
