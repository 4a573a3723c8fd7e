import { STALE_PROCESSING_MS } from '../domain/attempt-policy.ts';
import type { PaymentChange } from '../domain/payment.entity.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import { settleAbandoned } from './abandoned-payment.ts';
import type { HeldCard } from './held-card.ts';
import { REVERSAL_RETRY_MS, type Reverse } from './reversal.ts';

/** Settles up to limit payments left behind; answers how many it took. */
export type RecoverPayments = (limit: number) => Promise<number>;

/**
 * Creates the recovery sweep. A leg still processing after
 * STALE_PROCESSING_MS was left by a process that died: it fails when nothing
 * reached an acquirer and is reversed when something did; a reversal that
 * failed earlier is tried again. Sweepers on several instances take disjoint
 * legs (SKIP LOCKED, and a lease on updated_at).
 */
export function createRecoverPayments(deps: { readonly uow: UnitOfWork; readonly clock: Clock; readonly heldCard: HeldCard; readonly reverse: Reverse }): RecoverPayments {
  return async (limit) => {
    const now = deps.clock.now();
    const taken = await deps.uow.run(async (tx) => {
      const claimed = await tx.payments.claimUnsettled(
        { processing: new Date(now.getTime() - STALE_PROCESSING_MS), reversal: new Date(now.getTime() - REVERSAL_RETRY_MS) },
        now,
        limit,
      );
      const toReverse: PaymentChange[] = [];
      for (const change of claimed) {
        // Reversed right below: ours until REVERSAL_RETRY_MS from now, so no other sweeper takes it meanwhile.
        const settled = change.leg.status === 'processing' ? await settleAbandoned(deps.heldCard, tx, change, now, new Date(now.getTime() + REVERSAL_RETRY_MS)) : change;
        if (settled.leg.status === 'reversal_pending') toReverse.push(settled);
      }
      return { count: claimed.length, toReverse };
    });
    for (const pending of taken.toReverse) await deps.reverse(pending);
    return taken.count;
  };
}
