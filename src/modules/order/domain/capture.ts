import { parseCurrency, parsePositiveAmount } from '../../../kernel/domain/money.ts';
import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';
import type { CaptureMethod, Order } from './order.entity.ts';

/** The capture methods an order may be created with. */
export const CAPTURE_METHODS: readonly CaptureMethod[] = ['automatic', 'manual'];

/**
 * How long a manual order's authorization may wait for its capture: 7 days, as card networks
 * let an authorization stand (Stripe's default). The sweeper releases it then.
 */
export const AUTHORIZATION_VALIDITY_MS = 7 * 24 * 3600_000;

/** When an authorization made at `authorizedAt` is released unless captured. */
export function authorizationExpiry(authorizedAt: Date): Date {
  return new Date(authorizedAt.getTime() + AUTHORIZATION_VALIDITY_MS);
}

/** True when an authorized order's authorization has run out at `now`. */
export function isAuthorizationDue(order: Pick<Order, 'status' | 'authorizationExpiresAt'>, now: Date): boolean {
  return order.status === 'authorized' && order.authorizationExpiresAt !== null && now >= order.authorizationExpiresAt;
}

/**
 * Decides a capture of an authorized order: `amount` (minor units of the order's currency), or the
 * whole authorized amount when undefined. Answers the amount to capture; what is left of the
 * authorization is released.
 * @throws DomainError capture.order_not_capturable (not authorized, or the authorization ran out),
 *   money.amount_invalid or money.amount_too_large (not a positive amount of the currency), or
 *   capture.exceeds_authorized
 */
export function planCapture(order: Order, amount: bigint | undefined, now: Date): bigint {
  if (order.status !== 'authorized') {
    const hint =
      order.captureMethod === 'automatic'
        ? ' Its capture method is automatic: it was captured as the customer paid.'
        : order.status === 'paid' || order.status === 'partially_refunded' || order.status === 'refunded'
          ? ' It was captured already.'
          : '';
    throw new DomainError('capture.order_not_capturable', `Order ${order.id} is ${order.status}: only an authorized order can be captured.${hint}`);
  }
  if (isAuthorizationDue(order, now)) {
    throw new DomainError('capture.order_not_capturable', `The authorization of order ${order.id} ran out at ${order.authorizationExpiresAt!.toISOString()}; it is being released.`);
  }
  if (amount === undefined) return order.amount;
  const captured = parsePositiveAmount(amount, parseCurrency(order.currency));
  if (captured > order.amount) {
    throw invalid('capture.exceeds_authorized', 'amount', `amount ${captured} exceeds the ${order.amount} (minor units of ${order.currency}) authorized for order ${order.id}.`);
  }
  return captured;
}

/**
 * Reads a capture method as given by a caller.
 * @throws DomainError order.capture_method_invalid
 */
export function parseCaptureMethod(value: string): CaptureMethod {
  if (!(CAPTURE_METHODS as readonly string[]).includes(value)) {
    throw invalid('order.capture_method_invalid', 'capture_method', `capture_method must be one of ${CAPTURE_METHODS.join(', ')} (got "${value}").`);
  }
  return value as CaptureMethod;
}
