import type { Order } from '../order/order.entity.ts';

/** Event types, past tense and dotted. Later issues add order.refunded, payout.settled and the rest. */
export type EventType = 'order.created' | 'order.paid' | 'order.failed' | 'order.expired' | 'order.payment_reversed';

/** Prefix of every event id. */
export const EVENT_ID_PREFIX = 'evt_';

/** JSON value as carried in an event's data. */
export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/**
 * Something that happened to an order, written to the outbox in the same
 * transaction as the change and published later with msgID = id.
 */
export interface DomainEvent {
  /** "evt_" + opaque suffix, identical across redeliveries. */
  readonly id: string;
  readonly type: EventType;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly orderId: string;
  /** The merchant's order reference, carried by every event. */
  readonly reference: string;
  /** Per-order sequence number (the order's version after the change), so receivers drop stale events. */
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
  };
}
