import { reasonOrderRefuses, takesPayment } from '../../order/domain/order-transitions.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import { cancel, claimChallenge, requireAuthentication } from '../domain/payment.entity.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { AcquirerRelease } from './acquirer-release.ts';
import { attemptsOf } from './attempts-of.ts';
import type { HeldCard } from './held-card.ts';
import type { OrderExpiry } from './order-expiry.ts';
import { captureApproved, holdPending, type CaptureApprovedDeps } from './pay-order.ts';
import { outcomeOf, waitForSubmission, type PaymentOutcome, type SubmissionReads } from './payment-outcome.ts';
import type { RouteRegistry } from './route-registry.ts';

/** What answering a 3-D Secure challenge is asked to do. */
export interface AuthenticatePaymentCommand {
  readonly orderId: string;
  /** Checks, under the order's lock, that the caller may answer for this order (the checkout page's token). */
  readonly authorize: (order: Order) => void;
  readonly attemptId: string;
  /**
   * What came back: the return leg's parameters after the redirect (`returnParams`, as the
   * processor sent them), the code typed into an in-app challenge (`code`, the mobile SDK's older
   * flow), or the customer closed the challenge.
   */
  readonly answer: { readonly returnParams: Readonly<Record<string, string>> } | { readonly code: string } | { readonly abandon: true };
}

/** Completes or abandons a payment's pending 3-D Secure challenge. */
export type AuthenticatePayment = (command: AuthenticatePaymentCommand) => Promise<PaymentOutcome>;

/** What answering a challenge runs on. */
export interface AuthenticatePaymentDeps extends CaptureApprovedDeps, SubmissionReads {
  readonly routes: Pick<RouteRegistry, 'processorOf'>;
  readonly release: Pick<AcquirerRelease, 'inTransaction' | 'voidAll'>;
  readonly expiry: Pick<OrderExpiry, 'expireIfDue'>;
  readonly heldCard: HeldCard;
}

/**
 * Creates the authentication use case. Whether the order still takes the
 * payment is decided under the order's lock (expiring it if due) before
 * anything is captured: a challenge the order no longer needs is canceled and
 * its authorization released. Otherwise the challenge is claimed, so that a
 * second answer cannot run alongside this one, and the answer passed to the
 * route: captured when it passes, declined when it fails.
 */
export function createAuthenticatePayment(deps: AuthenticatePaymentDeps): AuthenticatePayment {
  return async (command) => {
    const claimed = await deps.release.inTransaction(async (tx, release) => {
      const locked = await tx.orders.lock(command.orderId);
      if (!locked) throw new ApplicationError('checkout.not_found', 'No such checkout.');
      command.authorize(locked);
      if (!(await tx.payments.findByAttempt(locked.id, command.attemptId))) throw new ApplicationError('checkout.attempt_not_found', 'No such payment attempt for this checkout.');
      const order = await deps.expiry.expireIfDue(tx, locked, release);
      const change = (await tx.payments.findByAttempt(order.id, command.attemptId))!;
      if (change.leg.status !== 'requires_authentication') return { settled: true as const, change, order };
      if (!takesPayment(order)) {
        const canceled = cancel(change, reasonOrderRefuses(order), deps.clock.now());
        await tx.payments.cancel(canceled);
        await deps.heldCard.drop(tx, canceled);
        release(canceled.leg);
        return { settled: true as const, change: canceled, order };
      }
      const processing = claimChallenge(change, deps.clock.now());
      await tx.payments.claimChallenge(processing);
      return { settled: false as const, change: processing, order };
    });
    const { change } = claimed;
    if (claimed.settled) {
      if (change.leg.status === 'processing') return waitForSubmission(deps, change.leg.orderId, change.leg.submissionId ?? '');
      const attempts = await attemptsOf(deps.reads.payments, claimed.order.id);
      return outcomeOf({ order: claimed.order, attempts, merchant: await deps.merchants.merchantOf(claimed.order.merchantId) }, change);
    }
    if ('abandon' in command.answer) {
      await deps.release.voidAll([change.leg]);
      const settled = await deps.finisher.finishFailure(change, 'authentication_failed', 'abandoned');
      return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: 'authentication_failed' } });
    }
    const processor = deps.routes.processorOf(change.leg.route);
    if (!processor || !change.leg.processorRef) throw new Error(`attempt ${change.leg.id} has no route ${change.leg.route}`);
    // Both ways reach the processor's one completion: the in-app code as the only return parameter.
    const params = 'code' in command.answer ? { code: command.answer.code } : command.answer.returnParams;
    const answered = await processor.completeAuthorization(change.leg.processorRef, params);
    switch (answered.kind) {
      case 'approved':
        return captureApproved(deps, change, processor, answered.processorRef, 'passed', claimed.order.captureMethod);
      case 'declined': {
        const settled = await deps.finisher.finishFailure(change, answered.declineCode, 'failed');
        return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: answered.declineCode } });
      }
      case 'pending':
        return holdPending(deps, change, answered.processorRef);
      case 'action': {
        // The issuer asks again (another challenge step): the customer is sent to its page once more.
        const waiting = requireAuthentication(change, answered.processorRef, answered.redirect, answered.testCode ?? null, deps.clock.now());
        await deps.uow.runAlone((tx) => tx.payments.recordChallenge(waiting));
        const attempts = await attemptsOf(deps.reads.payments, claimed.order.id);
        return outcomeOf({ order: claimed.order, attempts, merchant: await deps.merchants.merchantOf(claimed.order.merchantId) }, waiting);
      }
      default: {
        const unknown: never = answered;
        throw new Error(`unknown authorization outcome ${JSON.stringify(unknown)}`);
      }
    }
  };
}
