import { createHash, timingSafeEqual } from 'node:crypto';
import type { Order } from '../../order/domain/order.entity.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';

/** Header carrying the checkout page's token on state-changing calls. */
export const CHECKOUT_TOKEN_HEADER = 'checkout-token';
/** Header carrying an order's client secret, beside a publishable key in Authorization. */
export const CLIENT_SECRET_HEADER = 'checkout-client-secret';
/** Header the embedded fields' number frame announces the merchant page's origin in (see PaymentClient.fieldsOrigin). */
export const FIELDS_ORIGIN_HEADER = 'checkout-fields-origin';

/**
 * The merchant origin an embedded fields' call announces, if it is a bare http(s) origin exactly as
 * a browser writes it; undefined otherwise. The gateway checks it again (checkEmbedderOrigin) before
 * it names it in a frame-ancestors.
 */
export function fieldsOriginOf(value: string | null): string | undefined {
  if (value === null || value.length > 255) return undefined;
  try {
    const url = new URL(value);
    return (url.protocol === 'https:' || url.protocol === 'http:') && url.origin === value ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What a call to CheckoutService proves about itself: either it comes from the hosted page (the
 * order's checkout token), or from an app holding the merchant's publishable key (already verified
 * into a scope) and the client secret the merchant's server handed it for one order.
 */
export type CheckoutCredential =
  | { readonly kind: 'checkout_token'; readonly token: string }
  | { readonly kind: 'client_secret'; readonly scope: Scope; readonly secret: string };

/** Joins an order id and a random part into the client secret handed out with the order. */
export function newClientSecret(orderId: string, random: string): string {
  return `${orderId}_secret_${random}`;
}

/** SHA-256 (hex) of a client secret: what the order stores, and what a presented secret is compared by. */
export function hashClientSecret(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

function sameText(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

const secretRefused = () =>
  new ApplicationError(
    'checkout.client_secret_invalid',
    'The client secret is missing, expired, or not the one of this order for this publishable key; ask your server for the order\'s client_secret (it is valid until the order expires, at most 24 hours).',
  );

/**
 * The one authorisation rule of CheckoutService: a call may act on `order` when it carries the
 * order's checkout token (the hosted page), or a publishable key of the order's merchant and mode
 * together with the order's unexpired client secret (an app). Anything else is refused.
 * Compared in constant time; run again under the order's lock when a payment changes it.
 * @throws ApplicationError checkout.token_invalid for a wrong or missing checkout token
 * @throws ApplicationError checkout.client_secret_invalid for a wrong, expired or foreign client secret,
 *   or a key of another merchant or mode
 */
export function authorizeCheckout(order: Order, credential: CheckoutCredential, now: Date): void {
  if (credential.kind === 'checkout_token') {
    if (!sameText(order.checkoutToken, credential.token)) {
      throw new ApplicationError('checkout.token_invalid', 'The checkout token is missing or wrong; reload the checkout page.');
    }
    return;
  }
  const { scope, secret } = credential;
  // Every refusal reads the same, so a caller learns nothing about which part was wrong.
  const hash = order.clientSecretHash;
  const expiresAt = order.clientSecretExpiresAt;
  const matches = hash !== null && hash !== undefined && sameText(hash, hashClientSecret(secret));
  if (!matches || scope.merchantId !== order.merchantId || scope.livemode !== order.livemode || !expiresAt || now >= expiresAt) {
    throw secretRefused();
  }
}

/**
 * Refuses a publishable key that came without a client secret.
 * @throws ApplicationError checkout.client_secret_invalid
 */
export function requireClientSecret(secret: string | null): string {
  if (!secret) throw secretRefused();
  return secret;
}
