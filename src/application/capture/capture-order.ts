import type { Scope } from '../../domain/merchant/caller.ts';
import { planCapture } from '../../domain/order/capture.ts';
import type { Order } from '../../domain/order/order.entity.ts';
import { markCaptured } from '../../domain/payment/payment.entity.ts';
import { DomainError } from '../../domain/shared/domain-error.ts';
import type { TransactionScope } from '../../ports/shared/unit-of-work.port.ts';
import type { PaymentKit } from '../payment/payment-kit.ts';
import { ApplicationError } from '../shared/application-error.ts';

/** Captures authorized orders (capture method manual). */
export interface CaptureOrder {
  /**
   * Captures `amount` of an authorized order (all it authorized when undefined), in `tx` (the
   * Idempotency-Key's transaction) and under the order's row lock: the acquirer captures, then the
   * payment succeeds, the order becomes paid with order.paid, and the capture's ledger transaction
   * (fees on the amount captured) is posted, all in `tx`. The rest of the authorization is released
   * (the acquirer releases what a capture leaves). Concurrent captures of one order queue on the
   * lock: the first captures, the others find it paid.
   * @throws ApplicationError order.not_found; DomainError capture.order_not_capturable,
   *   capture.exceeds_authorized, money.amount_invalid, money.amount_too_large, capture.declined
   */
  capture(tx: TransactionScope, scope: Scope, orderId: string, amount: bigint | undefined): Promise<Order>;
}

/** Creates the capture use case over the payment kit's acquirers and its ledger posting. */
export function createCaptureOrder(kit: PaymentKit): CaptureOrder {
  const { deps } = kit;
  return {
    async capture(tx, scope, orderId, amount) {
      const found = await tx.orders.findById(scope, orderId);
      if (!found) throw new ApplicationError('order.not_found', `No such order: "${orderId}".`, 'id');
      const order = (await tx.orders.lock(found.id))!;
      const now = deps.clock.now();
      const captured = planCapture(order, amount, now);
      const record = (await tx.payments.listForOrder(order.id)).find((p) => p.payment.status === 'authorized');
      const leg = record?.attempts.find((a) => a.status === 'authorized');
      const processor = leg && kit.processorOf(leg.route);
      if (!record || !leg?.processorRef || !processor) throw new Error(`authorized order ${order.id} has no authorized payment on a known route`);
      // The acquirer is asked while the row is locked, so that two captures cannot both reach it.
      const answer = await processor.capture(leg.processorRef, captured);
      if (answer.kind === 'declined') {
        throw new DomainError('capture.declined', `The acquirer declined the capture of order ${order.id} (${answer.declineCode}); the order stays authorized.`);
      }
      await tx.payments.markCaptured(markCaptured({ payment: record.payment, leg }, { processorRef: answer.processorRef, amount: captured, capturedAt: now }, leg.authentication, now));
      const merchant = await kit.merchantIn(tx, order.merchantId);
      return kit.recordPaid(tx, order, { id: record.payment.id, method: record.payment.method }, merchant, now, captured);
    },
  };
}
