import type { DomainEvent, JsonValue } from '../../event/domain/domain-event.ts';
import type { LineItem } from '../../order/domain/order.entity.ts';

/** How many payments a link accepts: exactly one (single_use), or any number (collecting). */
export type PaymentLinkType = 'single_use' | 'collecting';
/** Every {@link PaymentLinkType}. */
export const PAYMENT_LINK_TYPES: readonly PaymentLinkType[] = ['single_use', 'collecting'];

/** Whether a link takes payment now, and if not why. */
export type PaymentLinkStatus = 'active' | 'deactivated' | 'expired' | 'completed';

/** A merchant's reusable or single-use request for payment, shared as a URL. */
export interface PaymentLink {
  /** "plink_" + opaque suffix. */
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  /** The unguessable last segment of url; it is what a customer holds, not the id. */
  readonly suffix: string;
  /** <checkout host>/l/<suffix>. */
  readonly url: string;
  readonly type: PaymentLinkType;
  readonly amount: bigint;
  readonly currency: string;
  /** The reference every order of the link carries. */
  readonly reference: string;
  readonly lineItems: readonly LineItem[];
  readonly returnUrl: string | null;
  /** When the link stops taking payment; null: never. */
  readonly expiresAt: Date | null;
  readonly deactivatedAt: Date | null;
  /** Orders of the link that were paid. */
  readonly completedPayments: number;
  readonly createdAt: Date;
  /** Raised on every change; the sequence of the link's latest event. */
  readonly version: number;
}

/** Prefix of every payment link id. */
export const PAYMENT_LINK_ID_PREFIX = 'plink_';

/** How long an order started from a link can be paid, unless the link expires sooner: 1 hour. */
export const LINK_ORDER_TTL_MS = 3600_000;

/** Builds a link's URL on a merchant's checkout host. */
export function paymentLinkUrl(checkoutHost: string, suffix: string): string {
  return `${checkoutHost.replace(/\/+$/, '')}/l/${suffix}`;
}

/** Whether the link takes payment at `now`: deactivation first, then a single use spent, then expiry. */
export function paymentLinkStatus(link: PaymentLink, now: Date): PaymentLinkStatus {
  if (link.deactivatedAt !== null) return 'deactivated';
  if (link.type === 'single_use' && link.completedPayments >= 1) return 'completed';
  if (link.expiresAt !== null && link.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/** When an order started from the link at `now` stops taking payment: an hour on, or the link's expiry if sooner. */
export function linkOrderExpiry(link: PaymentLink, now: Date): Date {
  const ttl = now.getTime() + LINK_ORDER_TTL_MS;
  return new Date(link.expiresAt === null ? ttl : Math.min(ttl, link.expiresAt.getTime()));
}

/** A change of a link and the event it raises, written together. */
export interface PaymentLinkTransition {
  readonly link: PaymentLink;
  readonly event: DomainEvent | undefined;
}

/** The public shape of a link inside event data. */
export function paymentLinkEventData(link: PaymentLink, now: Date): { [key: string]: JsonValue } {
  return {
    id: link.id,
    type: link.type,
    status: paymentLinkStatus(link, now),
    amount: Number(link.amount),
    currency: link.currency,
    reference: link.reference,
    url: link.url,
    completed_payments: link.completedPayments,
    expires_at: link.expiresAt?.toISOString() ?? null,
    deactivated_at: link.deactivatedAt?.toISOString() ?? null,
    livemode: link.livemode,
  };
}

function linkEvent(link: PaymentLink, type: 'payment_link.completed' | 'payment_link.deactivated', data: { [key: string]: JsonValue }, ids: { eventId: string; now: Date }): DomainEvent {
  return {
    id: ids.eventId,
    type,
    merchantId: link.merchantId,
    livemode: link.livemode,
    subject: { type: 'payment_link', id: link.id },
    orderId: null,
    reference: link.reference,
    sequence: link.version,
    createdAt: ids.now,
    data,
  };
}

/**
 * Deactivates an active (or expired, or completed) link, with payment_link.deactivated. A link
 * deactivated already is left as it is (no event).
 */
export function deactivate(link: PaymentLink, ids: { eventId: string; now: Date }): PaymentLinkTransition {
  if (link.deactivatedAt !== null) return { link, event: undefined };
  const next: PaymentLink = { ...link, deactivatedAt: ids.now, version: link.version + 1 };
  return { link: next, event: linkEvent(next, 'payment_link.deactivated', paymentLinkEventData(next, ids.now), ids) };
}

/**
 * Counts a paid order of the link. A single-use link is completed by it, with
 * payment_link.completed naming the order; a collecting link just counts.
 * @throws Error when a single-use link already has its payment: the reservation taken when the
 * payment started makes this unreachable, and the caller's transaction must not commit it.
 */
export function recordCompletion(link: PaymentLink, orderId: string, ids: { eventId: string; now: Date }): PaymentLinkTransition {
  if (link.type === 'single_use' && link.completedPayments >= 1) throw new Error(`single-use payment link ${link.id} already has its payment`);
  const next: PaymentLink = { ...link, completedPayments: link.completedPayments + 1, version: link.version + 1 };
  if (next.type !== 'single_use') return { link: next, event: undefined };
  return { link: next, event: linkEvent(next, 'payment_link.completed', { ...paymentLinkEventData(next, ids.now), order_id: orderId }, ids) };
}
