import { cancel, type PaymentRecord } from '../domain/payment.entity.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { Release } from './acquirer-release.ts';
import type { HeldCard } from './held-card.ts';

/**
 * Cancels the order's open challenges in this transaction (from `records`, the order's payments read
 * under its lock, when given); their authorizations are released after it.
 */
export type CancelChallenges = (tx: TransactionScope, orderId: string, reason: 'order_paid' | 'order_expired', release: Release, records?: readonly PaymentRecord[]) => Promise<void>;

/** Builds the cancellation of open 3-D Secure challenges (an order paid another way, or expired). */
export function createCancelChallenges(deps: { readonly clock: Clock; readonly heldCard: HeldCard }): CancelChallenges {
  return async (tx, orderId, reason, release, records) => {
    const now = deps.clock.now();
    for (const record of records ?? (await tx.payments.listForOrder(orderId))) {
      const waiting = record.attempts.find((a) => a.status === 'requires_authentication');
      if (!waiting) continue;
      const canceled = cancel({ payment: record.payment, leg: waiting }, reason, now);
      await tx.payments.cancel(canceled);
      await deps.heldCard.drop(tx, canceled);
      release(canceled.leg);
    }
  };
}
