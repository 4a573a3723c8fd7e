import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { PaymentAttempt } from './payment-attempt.entity.ts';

/** Most customer submissions one order accepts (card-testing protection). */
export const MAX_ATTEMPTS_PER_ORDER = 10;

/** An attempt still "processing" after this long was abandoned by a crashed process. */
export const STALE_PROCESSING_MS = 120_000;

/** True while another step of the payment may still be running (not yet abandoned). */
export function isInFlight(attempt: Pick<PaymentAttempt, 'status' | 'updatedAt'>, now: Date): boolean {
  return attempt.status === 'processing' && now.getTime() - attempt.updatedAt.getTime() < STALE_PROCESSING_MS;
}

/** Customer submissions an order has had (the automatic failover to a next route does not count). */
export function submissionsOf(attempts: readonly PaymentAttempt[]): number {
  return attempts.filter((a) => !a.retry).length;
}

/**
 * Whether an order's attempts leave room for one more submission: none in
 * flight, and fewer than MAX_ATTEMPTS_PER_ORDER so far.
 * @throws DomainError checkout.payment_in_progress or checkout.attempts_exhausted
 */
export function assertSubmissionAllowed(attempts: readonly PaymentAttempt[], now: Date): void {
  if (attempts.some((a) => isInFlight(a, now))) {
    throw new DomainError('checkout.payment_in_progress', 'Another payment for this order is being processed.');
  }
  if (submissionsOf(attempts) >= MAX_ATTEMPTS_PER_ORDER) {
    throw new DomainError('checkout.attempts_exhausted', `This order has had ${MAX_ATTEMPTS_PER_ORDER} payment attempts and accepts no more.`);
  }
}
