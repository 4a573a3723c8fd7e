import { abandonProcessing, holdForReversal, type PaymentChange } from '../domain/payment.entity.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { HeldCard } from './held-card.ts';
import { REVERSAL_RETRY_MS } from './reversal.ts';

/**
 * Settles a leg a crashed process left processing: if an acquirer holds
 * something for it (a processor reference), it is held for reversal (taken
 * by the sweep from reversalDueAt on); otherwise nothing reached an
 * acquirer and it simply failed.
 */
export async function settleAbandoned(heldCard: HeldCard, tx: TransactionScope, stale: PaymentChange, now: Date, reversalDueAt: Date): Promise<PaymentChange> {
  // Whichever way it ends, the payment will not succeed: a card it was asked to save is dropped.
  await heldCard.drop(tx, stale);
  if (stale.leg.processorRef) {
    const pending = holdForReversal(stale, stale.leg.processorRef, 'attempt_abandoned', stale.leg.authentication, new Date(reversalDueAt.getTime() - REVERSAL_RETRY_MS));
    await tx.payments.holdForReversal(pending);
    return pending;
  }
  const failed = abandonProcessing(stale, now);
  await tx.payments.recordDecline(failed);
  return failed;
}
