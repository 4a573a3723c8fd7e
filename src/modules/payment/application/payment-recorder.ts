import type { Order } from '../../order/domain/order.entity.ts';
import { markPaid, markVoided } from '../../order/domain/order-transitions.ts';
import { capturePosting, voidPosting } from '../../ledger/domain/postings.ts';
import { ledgerTransactionId } from '../../ledger/domain/ledger.ts';
import type { MerchantRecord } from '../../merchant/ports/merchant-repository.port.ts';
import { completeLinkPayment } from '../../payment-link/application/link-claim.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { PaymentMethod } from '../domain/payment-attempt.entity.ts';
import { settlementBreakdown } from '../domain/settlement.ts';

/** What a payment's end writes to its order, the outbox and the ledger, in the caller's transaction. */
export interface PaymentRecorder {
  /**
   * Marks the order paid by a payment that captured `captured` (its whole amount when absent):
   * transition, event, the payment link's count and the capture's ledger transaction (fees on what
   * was captured), in `tx`.
   */
  recordPaid(tx: TransactionScope, order: Order, payment: { readonly id: string; readonly method: PaymentMethod }, merchant: MerchantRecord, now: Date, captured?: bigint): Promise<Order>;
  /** Voids the paid order in `tx`: order.voided, and its capture undone in the ledger. */
  recordVoid(tx: TransactionScope, order: Order, paymentId: string): Promise<Order>;
}

/** Builds the recorder over the clock and the event ids. */
export function createPaymentRecorder(deps: { readonly clock: Clock; readonly eventIds: EventIds }): PaymentRecorder {
  return {
    async recordPaid(tx, order, payment, merchant, now, amount = order.amount) {
      const captured = { amount, currency: order.currency };
      const settlement = settlementBreakdown(captured, merchant.settlementCurrency);
      const t = markPaid(order, { method: payment.method, settlement: settlement.net, captured: amount }, deps.eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
      await completeLinkPayment(tx, order, deps.eventIds);
      await tx.ledger.post(
        capturePosting({ paymentId: payment.id, orderId: order.id, merchantId: order.merchantId, livemode: order.livemode, reference: order.reference, captured, settlement, at: now }),
      );
      return t.order;
    },
    async recordVoid(tx, order, paymentId) {
      const t = markVoided(order, deps.eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
      const capture = await tx.ledger.find(ledgerTransactionId('capture', paymentId));
      if (capture) await tx.ledger.post(voidPosting(capture, deps.clock.now()));
      return t.order;
    },
  };
}
