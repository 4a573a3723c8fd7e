import type { Money } from '../../../kernel/domain/money.ts';

/**
 * Lifecycle states of an order. failed is not final: the customer may pay until the order expires.
 * A paid order becomes partially_refunded, then refunded, as refunds succeed; or voided before settlement.
 * An order of capture method manual is authorized when the customer pays, then paid once captured, or
 * voided when its authorization is released (by the merchant, or after AUTHORIZATION_VALIDITY_MS).
 */
export type OrderStatus = 'pending' | 'failed' | 'authorized' | 'paid' | 'expired' | 'partially_refunded' | 'refunded' | 'voided';

/** When an order's payment is captured: as the customer pays (automatic), or later by the merchant (manual). */
export type CaptureMethod = 'automatic' | 'manual';

/** One line of an order, as shown on the checkout and receipt. */
export interface LineItem {
  readonly name: string;
  /** Minor units of the order's currency. */
  readonly amount: bigint;
}

/** A merchant's request for payment. */
export interface Order {
  /** "ord_" + opaque suffix; the suffix also names the checkout page. */
  readonly id: string;
  readonly merchantId: string;
  readonly livemode: boolean;
  readonly reference: string;
  readonly amount: bigint;
  readonly currency: string;
  readonly status: OrderStatus;
  readonly lineItems: readonly LineItem[];
  readonly returnUrl: string | null;
  readonly checkoutUrl: string;
  readonly method: string | null;
  readonly settlement: Money | null;
  readonly captureMethod: CaptureMethod;
  /** Minor units captured; null until captured. Below amount after a partial capture, and what refunds are bounded by. */
  readonly amountCaptured: bigint | null;
  /** While authorized: when the authorization is released unless captured; null otherwise. */
  readonly authorizationExpiresAt: Date | null;
  /** Minor units refunded so far (succeeded refunds only). */
  readonly amountRefunded: bigint;
  /** When its money moved from the merchant's pending to the available balance; null until then. */
  readonly settledAt: Date | null;
  readonly createdAt: Date;
  /** When the checkout stops accepting payment. */
  readonly expiresAt: Date;
  /** Proof, sent by the checkout page as a header, that a call comes from the page (CSRF protection). */
  readonly checkoutToken: string;
  /**
   * SHA-256 (hex) of the order's client secret, which lets an app with the merchant's publishable key
   * pay this order; absent or null when the order has none (payment links', subscriptions').
   */
  readonly clientSecretHash?: string | null;
  /** When the client secret stops being accepted: the order's expiry or CLIENT_SECRET_MAX_TTL_MS after creation, whichever is first. */
  readonly clientSecretExpiresAt?: Date | null;
  /** The merchant's customer (cus_…) the order names; absent or null when none. */
  readonly customerId?: string | null;
  /** Incremented on every state change; the sequence number of the order's latest event. */
  readonly version: number;
  /** The payment link ("plink_…") that created the order; absent or null when none did. */
  readonly paymentLinkId?: string | null;
  /** The subscription ("sub_…") and its cycle (1, 2, …) the order charges; absent or null for other orders. */
  readonly subscriptionId?: string | null;
  readonly subscriptionCycle?: number | null;
}

/** Longest a client secret is accepted after its order's creation: 24 hours (shorter when the order expires sooner). */
export const CLIENT_SECRET_MAX_TTL_MS = 24 * 3600_000;

/** When a client secret made at `createdAt` for an order expiring at `expiresAt` stops being accepted. */
export function clientSecretExpiry(createdAt: Date, expiresAt: Date): Date {
  return new Date(Math.min(expiresAt.getTime(), createdAt.getTime() + CLIENT_SECRET_MAX_TTL_MS));
}

/** Prefix of every order id. */
export const ORDER_ID_PREFIX = 'ord_';

/** The opaque part of an order id, which names its checkout page (/c/<suffix>). */
export function orderSuffix(orderId: string): string {
  return orderId.slice(ORDER_ID_PREFIX.length);
}

/** The order id a checkout id (/c/<checkout id>) stands for. */
export function orderIdOfCheckout(checkoutId: string): string {
  return ORDER_ID_PREFIX + checkoutId;
}

/** Builds the checkout URL of an order on a merchant's checkout host. */
export function checkoutUrlFor(checkoutHost: string, orderId: string): string {
  return `${checkoutHost.replace(/\/+$/, '')}/c/${orderSuffix(orderId)}`;
}
