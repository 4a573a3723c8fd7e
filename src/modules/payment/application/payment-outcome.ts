import type { DeclineCode } from '../domain/decline-code.ts';
import type { PaymentAttempt } from '../domain/payment-attempt.entity.ts';
import type { PaymentChange } from '../domain/payment.entity.ts';
import type { ChallengeRedirect } from '../domain/payment-attempt.entity.ts';
import type { PaymentRepository } from '../ports/payment-repository.port.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import type { MerchantRecord } from '../../merchant/ports/merchant-repository.port.ts';
import { isPaid } from '../../order/domain/order-transitions.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { attemptsOf } from './attempts-of.ts';
import type { MerchantCache } from './merchant-cache.ts';

/** How a payment attempt ended for the caller: the order at its new state, and the order's attempts. */
export interface Settled {
  readonly order: Order;
  readonly attempts: readonly PaymentAttempt[];
  readonly merchant: MerchantRecord;
}

/** Where a payment left the order. */
export interface PaymentOutcome {
  readonly status: 'succeeded' | 'requires_authentication' | 'failed';
  readonly settled: Settled;
  /** The challenge waiting: the attempt, where the customer is sent (null for attempts before redirects), and test mode's code. */
  readonly challenge: { readonly attemptId: string; readonly redirect: ChallengeRedirect | null; readonly testCode: string | undefined } | undefined;
  readonly declineCode: DeclineCode | undefined;
}

/** The outcome a settled payment gives its caller. @throws DomainError checkout.expired when the order expired instead. */
export function outcomeOf(settled: Settled, change: Pick<PaymentChange, 'leg'>): PaymentOutcome {
  if (isPaid(settled.order)) return { status: 'succeeded', settled, challenge: undefined, declineCode: undefined };
  if (settled.order.status === 'expired') throw new DomainError('checkout.expired', 'This checkout has expired.');
  if (change.leg.status === 'requires_authentication') {
    return { status: 'requires_authentication', settled, challenge: { attemptId: change.leg.id, redirect: change.leg.challengeRedirect ?? null, testCode: change.leg.challengeTestCode ?? undefined }, declineCode: undefined };
  }
  return { status: 'failed', settled, challenge: undefined, declineCode: change.leg.declineCode ?? undefined };
}

/** What waiting for a submission reads (outside any transaction). */
export interface SubmissionReads {
  readonly reads: { readonly orders: Pick<OrderRepository, 'findForCheckout'>; readonly payments: Pick<PaymentRepository, 'findBySubmission' | 'listAttemptsForOrders'> };
  readonly merchants: Pick<MerchantCache, 'merchantOf'>;
  /** How long a resubmission waits for the first submission to finish (15 s when absent). */
  readonly replayWaitMs?: number | undefined;
}

/** The first submission's outcome, once it is no longer processing (a repeated submission waits for it). */
export async function waitForSubmission(deps: SubmissionReads, orderId: string, submissionId: string): Promise<PaymentOutcome> {
  const deadline = Date.now() + (deps.replayWaitMs ?? 15_000);
  for (;;) {
    const record = await deps.reads.payments.findBySubmission(orderId, submissionId);
    const last = record!.attempts.at(-1)!;
    if (last.status !== 'processing') {
      const order = (await deps.reads.orders.findForCheckout(orderId))!;
      return outcomeOf({ order, attempts: await attemptsOf(deps.reads.payments, orderId), merchant: await deps.merchants.merchantOf(order.merchantId) }, { leg: last });
    }
    if (Date.now() > deadline) throw new DomainError('checkout.payment_in_progress', 'This payment is still being processed; refresh the page in a moment.');
    await new Promise((r) => setTimeout(r, 50));
  }
}
