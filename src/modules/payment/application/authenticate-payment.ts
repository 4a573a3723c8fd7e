import { reasonOrderRefuses, takesPayment } from '../../order/domain/order-transitions.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import { cancel, claimChallenge } from '../domain/payment.entity.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { attemptsOf, type PaymentKit } from './payment-kit.ts';
import { outcomeOf, waitForSubmission, type PaymentOutcome } from './payment-outcome.ts';
import type { Capture } from './pay-order.ts';

/** What answering a 3-D Secure challenge is asked to do. */
export interface AuthenticatePaymentCommand {
  readonly orderId: string;
  /** Checks, under the order's lock, that the caller may answer for this order (the checkout page's token). */
  readonly authorize: (order: Order) => void;
  readonly attemptId: string;
  /** The code the customer typed, or the customer closed the challenge. */
  readonly answer: { readonly code: string } | { readonly abandon: true };
}

/** Completes or abandons a payment's pending 3-D Secure challenge. */
export type AuthenticatePayment = (command: AuthenticatePaymentCommand) => Promise<PaymentOutcome>;

/**
 * Creates the authentication use case. Whether the order still takes the
 * payment is decided under the order's lock (expiring it if due) before
 * anything is captured: a challenge the order no longer needs is canceled and
 * its authorization released. Otherwise the challenge is claimed, so that a
 * second answer cannot run alongside this one, and the answer passed to the
 * route: captured when it passes, declined when it fails.
 */
export function createAuthenticatePayment(
  kit: PaymentKit,
  capture: Capture,
): AuthenticatePayment {
  const { deps } = kit;
  return async (command) => {
    const claimed = await kit.inTransaction(async (tx, release) => {
      const locked = await tx.orders.lock(command.orderId);
      if (!locked) throw new ApplicationError('checkout.not_found', 'No such checkout.');
      command.authorize(locked);
      if (!(await tx.payments.findByAttempt(locked.id, command.attemptId))) throw new ApplicationError('checkout.attempt_not_found', 'No such payment attempt for this checkout.');
      const order = await kit.expireIfDue(tx, locked, release);
      const change = (await tx.payments.findByAttempt(order.id, command.attemptId))!;
      if (change.leg.status !== 'requires_authentication') return { settled: true as const, change, order };
      if (!takesPayment(order)) {
        const canceled = cancel(change, reasonOrderRefuses(order), deps.clock.now());
        await tx.payments.cancel(canceled);
        await kit.dropHeldCard(tx, canceled);
        release(canceled.leg);
        return { settled: true as const, change: canceled, order };
      }
      const processing = claimChallenge(change, deps.clock.now());
      await tx.payments.claimChallenge(processing);
      return { settled: false as const, change: processing, order };
    });
    const { change } = claimed;
    if (claimed.settled) {
      if (change.leg.status === 'processing') return waitForSubmission(kit, change.leg.orderId, change.leg.submissionId ?? '');
      const attempts = await attemptsOf(deps.reads.payments, claimed.order.id);
      return outcomeOf({ order: claimed.order, attempts, merchant: await kit.merchantOf(claimed.order.merchantId) }, change);
    }
    if ('abandon' in command.answer) {
      await kit.voidAll([change.leg]);
      const settled = await kit.finishFailure(change, 'authentication_failed', 'abandoned');
      return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: 'authentication_failed' } });
    }
    const processor = kit.processorOf(change.leg.route);
    if (!processor || !change.leg.processorRef) throw new Error(`attempt ${change.leg.id} has no route ${change.leg.route}`);
    const answered = await processor.completeAuthentication(change.leg.processorRef, command.answer.code);
    if (answered.kind === 'declined') {
      const settled = await kit.finishFailure(change, answered.declineCode, 'failed');
      return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: answered.declineCode } });
    }
    return capture(change, processor, answered.processorRef, 'passed', claimed.order.captureMethod);
  };
}
