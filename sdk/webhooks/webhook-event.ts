// The envelope every webhook delivery carries, as the receiver sees it after verification.

/** Every event type the service sends (the same list as the service's EVENT_TYPES). */
export type WebhookEventType =
  | 'order.created'
  | 'order.paid'
  | 'order.authorized'
  | 'order.failed'
  | 'order.expired'
  | 'order.payment_reversed'
  | 'order.refunded'
  | 'order.voided'
  | 'order.disputed'
  | 'dispute.funds_withdrawn'
  | 'dispute.updated'
  | 'dispute.funds_reinstated'
  | 'dispute.closed'
  | 'payout.settled'
  | 'payout.paid'
  | 'payout.failed'
  | 'subscription.created'
  | 'subscription.charged'
  | 'subscription.payment_failed'
  | 'subscription.updated'
  | 'subscription.paused'
  | 'subscription.resumed'
  | 'subscription.canceled'
  | 'payment_link.completed'
  | 'payment_link.deactivated'
  | 'test_clock.ready';

/**
 * The event's payload: fields depend on the type. Events of an order (and of its refunds and
 * disputes, and of subscriptions) carry the merchant's reference; a payout's names its orders'.
 */
export interface WebhookEventData {
  /** The reference the merchant gave the order (or subscription) at creation, unchanged; absent on a payout's events. */
  readonly reference?: string;
  readonly [field: string]: unknown;
}

/** A verified webhook event: the parsed JSON body of a delivery. */
export interface WebhookEvent {
  /** "evt_" followed by an opaque suffix; identical on every redelivery, so it is the key to deduplicate on. */
  readonly id: string;
  /** Past tense and dotted, e.g. "order.paid". Unknown future types arrive as plain strings: ignore them with a 2xx. */
  readonly type: WebhookEventType | (string & {});
  /** When the event happened, ISO 8601 UTC (not when it was delivered). */
  readonly created: string;
  /** False for events caused by test keys. */
  readonly livemode: boolean;
  /** Per-order sequence number: an event with a lower sequence than one already applied for the same order is stale. */
  readonly sequence: number;
  readonly data: WebhookEventData;
}
