import { closeDispute, isPastDue, testOutcome } from '../domain/dispute.entity.ts';
import { disputeLossPosting, disputeReinstatementPosting } from '../../ledger/domain/postings.ts';
import { TEST_CARD_DISPUTE_DELAY_MS } from '../../payment/domain/test-card.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { DisputeRepository } from '../ports/dispute-repository.port.ts';
import { ConflictError } from '../../../kernel/ports/errors.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { OpenDisputeIn } from './open-dispute.ts';

/** What one sweep did. */
export interface DisputeSweep {
  /** Disputes the dispute test card opened. */
  readonly opened: number;
  /** Disputes closed: won or lost. */
  readonly closed: number;
}

/**
 * The disputes sweeper's work, driven by the Clock: opens the disputes of payments made with a
 * sandbox's dispute test card TEST_CARD_DISPUTE_DELAY_MS after their capture; closes as lost the
 * disputes unanswered past evidence_due_by; and, in test mode, decides submitted disputes by their
 * evidence (winning_evidence wins, losing_evidence loses). Each dispute changes in a transaction of
 * its own, with its events and its ledger transaction; several sweepers at once change each once.
 */
export type SweepDisputes = (limit?: number) => Promise<DisputeSweep>;

/** Creates the sweeper's use case. */
export function createSweepDisputes(
  deps: { readonly uow: UnitOfWork; readonly clock: Clock; readonly eventIds: EventIds; readonly onBackgroundError: (err: unknown) => void },
  reads: { readonly disputes: DisputeRepository },
  openIn: OpenDisputeIn,
): SweepDisputes {
  return async (limit = 100) => {
    const now = deps.clock.now();
    let opened = 0;
    for (const orderId of await reads.disputes.dueTestCardDisputes(new Date(now.getTime() - TEST_CARD_DISPUTE_DELAY_MS), limit)) {
      try {
        await deps.uow.run((tx) => openIn(tx, orderId, { reason: 'fraudulent', amount: undefined, evidenceDueBy: undefined }, 'test_card'));
        opened += 1;
      } catch (err) {
        // Another sweeper opened it (the unique index), or the order changed meanwhile (refunded in full): nothing to do.
        if (!(err instanceof ConflictError || err instanceof DomainError)) deps.onBackgroundError(err);
      }
    }
    let closed = 0;
    for (const disputeId of await reads.disputes.dueToClose(now, limit)) {
      try {
        const done = await deps.uow.run(async (tx) => {
          const seen = await tx.disputes.get(disputeId);
          if (!seen) return false;
          // The order first, as every change of its money: settlement and refunds see the outcome whole.
          const order = await tx.orders.lock(seen.orderId);
          const dispute = await tx.disputes.lock(disputeId);
          if (!order || !dispute) return false;
          const at = deps.clock.now();
          const outcome = isPastDue(dispute, at) ? 'lost' : testOutcome(dispute);
          if (!outcome) return false; // closed or decided by another sweeper meanwhile
          const change = closeDispute(dispute, outcome, at, deps.eventIds);
          await tx.disputes.recordOutcome(change.dispute, at);
          for (const event of change.events) await tx.outbox.append(event);
          const facts = {
            disputeId: dispute.id,
            paymentId: dispute.paymentId,
            orderId: order.id,
            merchantId: order.merchantId,
            livemode: order.livemode,
            reference: order.reference,
            disputed: { amount: dispute.amount, currency: dispute.currency },
            withdrawn: dispute.withdrawn,
            at,
          };
          await tx.ledger.post(outcome === 'won' ? disputeReinstatementPosting({ ...facts, to: order.settledAt ? 'merchant_available' : 'merchant_pending' }) : disputeLossPosting(facts));
          return true;
        });
        if (done) closed += 1;
      } catch (err) {
        deps.onBackgroundError(err);
      }
    }
    return { opened, closed };
  };
}
