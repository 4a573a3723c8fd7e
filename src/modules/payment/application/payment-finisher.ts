import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import { markAuthorized, markFailed, reasonOrderRefuses, takesPayment } from '../../order/domain/order-transitions.ts';
import { authorizationExpiry } from '../../order/domain/capture.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { DeclineCode } from '../domain/decline-code.ts';
import type { AuthenticationResult } from '../domain/payment-attempt.entity.ts';
import { holdForReversal, markAuthorized as markLegAuthorized, markCaptured, recordDecline, type PaymentChange } from '../domain/payment.entity.ts';
import type { PaymentRepository } from '../ports/payment-repository.port.ts';
import { countAttempt, type AttemptMetrics } from './attempt-metrics.ts';
import { attemptsOf } from './attempts-of.ts';
import type { HeldCard } from './held-card.ts';
import type { MerchantCache } from './merchant-cache.ts';
import type { Settled } from './payment-outcome.ts';
import type { PaymentRecorder } from './payment-recorder.ts';
import type { Reverse } from './reversal.ts';

/**
 * The end of a payment's attempt once its acquirer has answered, each in one transaction under the
 * order's lock: recorded as the order's, or reversed at the acquirer when the order can no longer
 * take it; counted in the metrics.
 */
export interface PaymentFinisher {
  /**
   * Records an approved authorization of a manual order as the order's (authorized, order.authorized,
   * nothing in the ledger), or reverses it when the order cannot take it.
   */
  finishAuthorization(change: PaymentChange, authentication: AuthenticationResult): Promise<Settled & { readonly reversed: boolean }>;
  /** Records a captured payment as the order's, or reverses the capture when the order cannot take it. */
  finishSuccess(change: PaymentChange, captureRef: string, authentication: AuthenticationResult): Promise<Settled & { readonly reversed: boolean }>;
  /** Records a declined payment (the order fails, if it still takes payment). */
  finishFailure(change: PaymentChange, declineCode: DeclineCode, authentication: AuthenticationResult): Promise<Settled>;
}

/** What finishing a payment runs on. */
export interface PaymentFinisherDeps {
  readonly uow: UnitOfWork;
  /** For the order as it stands after a reversal, read without a transaction. */
  readonly reads: { readonly orders: Pick<OrderRepository, 'findForCheckout'>; readonly payments: Pick<PaymentRepository, 'listAttemptsForOrders'> };
  readonly clock: Clock;
  readonly eventIds: EventIds;
  readonly merchants: Pick<MerchantCache, 'merchantOf'>;
  readonly recorder: Pick<PaymentRecorder, 'recordPaid'>;
  readonly heldCard: HeldCard;
  readonly reverse: Reverse;
  readonly metrics: AttemptMetrics;
}

/** Builds the end of payments. */
export function createPaymentFinisher(deps: PaymentFinisherDeps): PaymentFinisher {
  const { uow, clock, heldCard } = deps;

  /** What the customer sees after a reversal: the order as it now stands. */
  async function afterReversal(change: PaymentChange, recorded: Settled): Promise<Settled & { reversed: boolean }> {
    const order = (await deps.reads.orders.findForCheckout(change.leg.orderId)) ?? recorded.order;
    return { order, attempts: await attemptsOf(deps.reads.payments, order.id), merchant: recorded.merchant, reversed: true };
  }

  return {
    async finishSuccess(change, captureRef, authentication) {
      const merchant = await deps.merchants.merchantOf(change.payment.merchantId);
      const recorded = await uow.run(async (tx) => {
        const order = await tx.orders.lock(change.leg.orderId);
        if (!order) throw new Error(`order ${change.leg.orderId} vanished`);
        const current = await tx.payments.findByAttempt(order.id, change.leg.id);
        const now = clock.now();
        const capture = { processorRef: captureRef, amount: change.payment.amount, capturedAt: now };
        if (!takesPayment(order) || current?.leg.status !== 'processing') {
          const reason = takesPayment(order) ? 'attempt_abandoned' : reasonOrderRefuses(order);
          const pending = holdForReversal(current ?? change, captureRef, reason, authentication, now, capture);
          await tx.payments.holdForReversal(pending);
          if (order.customerId) await heldCard.drop(tx, change);
          return { reversal: pending, order, attempts: await attemptsOf(tx.payments, order.id) };
        }
        await tx.payments.markCaptured(markCaptured(current, capture, authentication, now));
        const paid = await deps.recorder.recordPaid(tx, order, { id: change.payment.id, method: change.payment.method }, merchant, now);
        // The card this payment was asked to save is saved with its success, or not at all.
        await heldCard.save(tx, paid, change);
        return { reversal: undefined, order: paid, attempts: await attemptsOf(tx.payments, order.id) };
      });
      countAttempt(deps.metrics, change, recorded.reversal ? 'reversed' : 'succeeded', undefined);
      if (!recorded.reversal) return { order: recorded.order, attempts: recorded.attempts, merchant, reversed: false };
      await deps.reverse(recorded.reversal);
      return afterReversal(change, { ...recorded, merchant });
    },

    async finishAuthorization(change, authentication) {
      const merchant = await deps.merchants.merchantOf(change.payment.merchantId);
      const recorded = await uow.run(async (tx) => {
        const order = await tx.orders.lock(change.leg.orderId);
        if (!order) throw new Error(`order ${change.leg.orderId} vanished`);
        const current = await tx.payments.findByAttempt(order.id, change.leg.id);
        const now = clock.now();
        const processorRef = current?.leg.processorRef ?? change.leg.processorRef;
        if (!takesPayment(order) || current?.leg.status !== 'processing' || !processorRef) {
          // The authorization cannot become the order's: it is released at the acquirer (reverse releases what is only authorized).
          const reason = takesPayment(order) ? 'attempt_abandoned' : reasonOrderRefuses(order);
          const pending = holdForReversal(current ?? change, processorRef ?? '', reason, authentication, now);
          await tx.payments.holdForReversal(pending);
          if (order.customerId) await heldCard.drop(tx, change);
          return { reversal: pending, order, attempts: await attemptsOf(tx.payments, order.id) };
        }
        await tx.payments.markAuthorized(markLegAuthorized(current, authentication, now));
        // No money moved: nothing is posted to the ledger until the capture.
        const t = markAuthorized(order, { method: change.payment.method, expiresAt: authorizationExpiry(now) }, deps.eventIds());
        await tx.orders.saveTransition(t.order);
        await tx.outbox.append(t.event);
        // The issuer approved the card: it is saved with the authorization, as a captured payment's is.
        await heldCard.save(tx, t.order, change);
        return { reversal: undefined, order: t.order, attempts: await attemptsOf(tx.payments, order.id) };
      });
      countAttempt(deps.metrics, change, recorded.reversal ? 'reversed' : 'authorized', undefined);
      if (!recorded.reversal) return { order: recorded.order, attempts: recorded.attempts, merchant, reversed: false };
      await deps.reverse(recorded.reversal);
      return afterReversal(change, { ...recorded, merchant });
    },

    async finishFailure(change, declineCode, authentication) {
      const merchant = await deps.merchants.merchantOf(change.payment.merchantId);
      const settled = await uow.run(async (tx) => {
        const order = await tx.orders.lock(change.leg.orderId);
        if (!order) throw new Error(`order ${change.leg.orderId} vanished`);
        await tx.payments.recordDecline(recordDecline(change, declineCode, authentication, clock.now()));
        if (order.customerId) await heldCard.drop(tx, change);
        let current = order;
        if (takesPayment(order)) {
          const t = markFailed(order, { declineCode, route: change.leg.route, retried: change.leg.retry, attemptId: change.leg.id, method: change.leg.method }, deps.eventIds());
          await tx.orders.saveTransition(t.order);
          await tx.outbox.append(t.event);
          current = t.order;
        }
        return { order: current, attempts: await attemptsOf(tx.payments, order.id), merchant };
      });
      countAttempt(deps.metrics, change, 'declined', declineCode);
      return settled;
    },
  };
}
