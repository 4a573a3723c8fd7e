import type { Order } from '../../order/domain/order.entity.ts';
import { assertPayable } from '../../order/domain/order-transitions.ts';
import { isInFlight } from '../domain/attempt-policy.ts';
import { ATTEMPT_ID_PREFIX } from '../domain/payment-attempt.entity.ts';
import { PAYMENT_ID_PREFIX, receivedTransfer } from '../domain/payment.entity.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { AfterCommit, TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { claimLink } from '../../payment-link/application/link-claim.ts';
import type { AcquirerRelease, Release } from './acquirer-release.ts';
import { countAttempt, type AttemptMetrics } from './attempt-metrics.ts';
import type { CancelChallenges } from './challenge-cancellation.ts';
import type { MerchantCache } from './merchant-cache.ts';
import type { OrderExpiry } from './order-expiry.ts';
import type { PaymentRecorder } from './payment-recorder.ts';

/**
 * A bank transfer for an order arrived (simulated in test mode): the order is
 * paid by it, in the caller's transaction (so that an idempotent call's key
 * commits with it); what it releases is voided after that commit.
 */
export type ReceiveTransfer = (tx: TransactionScope, afterCommit: AfterCommit, orderId: string) => Promise<Order>;

/**
 * Creates the use case that records a transfer's arrival. Under the order's
 * lock: a paid or expired order refuses it, as does a merchant without bank
 * transfer and an order whose card payment is in flight; a challenge still
 * open is canceled (the transfer paid the order), and the transfer becomes a
 * payment that succeeded on arrival, with order.paid.
 */
export function createReceiveTransfer(deps: {
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly merchants: Pick<MerchantCache, 'merchantIn'>;
  readonly release: Pick<AcquirerRelease, 'releaseAfter'>;
  readonly expiry: Pick<OrderExpiry, 'expireIfDue'>;
  readonly cancelChallenges: CancelChallenges;
  readonly recorder: Pick<PaymentRecorder, 'recordPaid'>;
  readonly metrics: AttemptMetrics;
}): ReceiveTransfer {
  return (tx, afterCommit, orderId) => receive(tx, deps.release.releaseAfter(afterCommit), orderId);

  async function receive(tx: TransactionScope, release: Release, orderId: string): Promise<Order> {
    const locked = await tx.orders.lock(orderId);
    if (!locked) throw new ApplicationError('order.not_found', `No such order: "${orderId}".`, 'id');
    const order = await deps.expiry.expireIfDue(tx, locked, release);
    if (order.status === 'expired') throw new DomainError('checkout.expired', 'This order has expired; a transfer for it would be returned to the payer.');
    const now = deps.clock.now();
    assertPayable(order, now);
    const merchant = await deps.merchants.merchantIn(tx, order.merchantId);
    if (!merchant.paymentMethods.includes('bank_transfer')) {
      throw new DomainError('checkout.method_unavailable', 'Bank transfer is not switched on for this merchant.');
    }
    // Read once (under the order's lock): the in-flight check and the challenges to cancel both use it.
    const records = await tx.payments.listForOrder(order.id);
    if (records.some((r) => r.attempts.some((a) => isInFlight(a, now)))) {
      throw new DomainError('checkout.payment_in_progress', 'A card payment for this order is being processed.');
    }
    // A single-use link's one payment may be another order's (paid, or being paid by card).
    await claimLink(tx, order, deps.clock.now());
    // The order is paid now: a challenge still open could otherwise capture a second time.
    await deps.cancelChallenges(tx, order.id, 'order_paid', release, records);
    const paymentId = deps.ids.newId(PAYMENT_ID_PREFIX);
    const transfer = receivedTransfer({
      paymentId,
      attemptId: deps.ids.newId(ATTEMPT_ID_PREFIX),
      orderId: order.id,
      merchantId: order.merchantId,
      livemode: order.livemode,
      amount: order.amount,
      currency: order.currency,
      now,
    });
    await tx.payments.start(transfer);
    const paid = await deps.recorder.recordPaid(tx, order, { id: paymentId, method: 'bank_transfer' }, merchant, now);
    // Counted before the caller's commit: a transaction that then rolls back (rare: the connection lost) is counted too.
    countAttempt(deps.metrics, transfer, 'succeeded', undefined);
    return paid;
  }
}
