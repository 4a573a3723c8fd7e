import { convert } from '../../payment/domain/settlement.ts';
import { DISPUTE_ID_PREFIX, openDispute, planDispute, type Dispute, type DisputeCommand, type DisputeSource } from '../domain/dispute.entity.ts';
import { disputeWithdrawalPosting } from '../../ledger/domain/postings.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { MerchantCache } from '../../payment/application/merchant-cache.ts';
import { evidenceOf } from './order-evidence.ts';

/**
 * Opens a dispute of an order in `tx`: under the order's row lock (so that refunds, other disputes
 * and settlement agree on what is left), the dispute is decided, stored with its hold on the order,
 * order.disputed (with the evidence already attached) and dispute.funds_withdrawn go to the outbox,
 * and the withdrawal of the amount and the fee is posted.
 * @throws DomainError dispute.* (see planDispute); Error when the order vanished
 */
export type OpenDisputeIn = (tx: TransactionScope, orderId: string, command: DisputeCommand, source: DisputeSource) => Promise<Dispute>;

/** Creates the use case that opens disputes, for the test helper and the dispute card's sweeper. */
export function createOpenDispute(deps: { readonly ids: IdGenerator; readonly clock: Clock; readonly eventIds: EventIds; readonly merchants: Pick<MerchantCache, 'merchantIn'> }): OpenDisputeIn {
  return async (tx, orderId, command, source) => {
    const order = await tx.orders.lock(orderId);
    if (!order) throw new Error(`order ${orderId} vanished`);
    const paid = (await tx.payments.listForOrder(order.id)).find((p) => p.payment.status === 'succeeded');
    const holds = { paymentId: paid?.payment.id, refundPending: await tx.refunds.pendingAmount(order.id), disputed: await tx.disputes.heldAmount(order.id) };
    const merchant = await deps.merchants.merchantIn(tx, order.merchantId);
    const now = deps.clock.now();
    const planned = planDispute(order, holds, command, {
      id: deps.ids.newId(DISPUTE_ID_PREFIX),
      now,
      settlementCurrency: merchant.settlementCurrency,
      // At the reference rate, as the capture was converted (a currency without one stays as it is, as refunds do).
      withdrawn: (amount) => convert(amount, merchant.settlementCurrency) ?? amount,
      source,
    });
    const change = openDispute(planned, order, await evidenceOf(tx, order), deps.eventIds);
    await tx.disputes.open(change.dispute);
    for (const event of change.events) await tx.outbox.append(event);
    await tx.ledger.post(
      disputeWithdrawalPosting({
        disputeId: planned.id,
        paymentId: planned.paymentId,
        orderId: order.id,
        merchantId: order.merchantId,
        livemode: order.livemode,
        reference: order.reference,
        disputed: { amount: planned.amount, currency: planned.currency },
        withdrawn: planned.withdrawn,
        fee: planned.fee,
        from: planned.withdrawnFrom,
        at: now,
      }),
    );
    return change.dispute;
  };
}
