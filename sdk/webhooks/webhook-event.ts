// The envelope every webhook delivery carries, as the receiver sees it after verification.

/**
 * Event types. The first five are sent today; the others are reserved for the
 * features that will emit them, so a receiver can list them in its switch now.
 */
export type WebhookEventType =
  | 'order.created'
  | 'order.paid'
  | 'order.failed'
  | 'order.expired'
  | 'order.payment_reversed'
  | 'order.refunded'
  | 'order.disputed'
  | 'dispute.funds_withdrawn'
  | 'dispute.updated'
  | 'dispute.funds_reinstated'
  | 'dispute.closed'
  | 'payout.settled'
  | 'subscription.charged';

/** The event's payload: fields depend on the type, and every type carries the merchant's order reference. */
export interface WebhookEventData {
  /** The reference the merchant gave the order at creation, unchanged. */
  readonly reference: string;
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
