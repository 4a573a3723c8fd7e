import { isPaid, noteRefund } from '../../order/domain/order-transitions.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { refundPosting } from '../../ledger/domain/postings.ts';
import { planRefund, REFUND_ID_PREFIX, type Refund, type RefundCommand } from '../domain/refund.entity.ts';
import type { RefundRepository } from '../ports/refund-repository.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { MerchantCache } from '../../payment/application/merchant-cache.ts';
import type { RouteRegistry } from '../../payment/application/route-registry.ts';

/** A refund with the order as it stands after it. */
export interface RefundResult {
  readonly refund: Refund;
  readonly order: Order;
  readonly refunds: readonly Refund[];
}

/** Refunds an order: reserve (in the caller's transaction), then settle with the acquirer. */
export interface RefundOrder {
  /**
   * Decides and reserves a refund under the order's row lock, in `tx` (the Idempotency-Key's
   * transaction): pending, its amount held so that no concurrent refund can spend it too.
   * @throws ApplicationError order.not_found; DomainError refund.* (see planRefund)
   */
  reserve(tx: TransactionScope, scope: Scope, orderId: string, command: RefundCommand): Promise<Refund>;
  /**
   * Asks the acquirer to refund a pending refund (idempotent there by the refund's id), then
   * records its answer with the order's transition, order.refunded and the ledger transaction, in
   * one transaction. A refund no longer pending is left as it is. Answers the refund as it stands.
   */
  settle(refundId: string): Promise<RefundResult>;
  /** Settles refunds a stopped process left pending for over a minute (the sweeper's job); answers how many. */
  settleStale(limit: number): Promise<number>;
}

/** How long a refund may stay pending before the sweeper settles it: well past any acquirer call. */
export const STALE_REFUND_MS = 60_000;

/** What refunding runs on: the routes' processors, and the payment's reads. */
export interface RefundOrderDeps {
  readonly uow: UnitOfWork;
  readonly reads: { readonly orders: Pick<OrderRepository, 'findForCheckout'>; readonly payments: Pick<PaymentRepository, 'listForOrder'> };
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly eventIds: EventIds;
  readonly routes: Pick<RouteRegistry, 'processorOf'>;
  readonly merchants: Pick<MerchantCache, 'merchantOf'>;
  /** An acquirer that did not answer, or a stale refund that could not be settled. */
  readonly onBackgroundError: (err: unknown) => void;
}

/** Creates the refund use case over the routes' processors and the refunds' own reads. */
export function createRefundOrder(deps: RefundOrderDeps, reads: { readonly refunds: RefundRepository }): RefundOrder {

  async function current(refundId: string): Promise<RefundResult> {
    const refund = await reads.refunds.findById(refundId);
    if (!refund) throw new Error(`refund ${refundId} vanished`);
    const order = await deps.reads.orders.findForCheckout(refund.orderId);
    if (!order) throw new Error(`order ${refund.orderId} vanished`);
    return { refund, order, refunds: await reads.refunds.listForOrder(order.id) };
  }

  const refundOrder: RefundOrder = {
    async reserve(tx, scope, orderId, command) {
      const found = await tx.orders.findById(scope, orderId);
      if (!found) throw new ApplicationError('order.not_found', `No such order: "${orderId}".`, 'id');
      // Under the order's row lock: refunds of one order are decided one after another.
      const order = (await tx.orders.lock(found.id))!;
      const captured = isPaid(order) ? (await tx.payments.listForOrder(order.id)).find((p) => p.payment.status === 'succeeded') : undefined;
      const inFlight = await tx.refunds.pendingAmount(order.id);
      // What open and lost disputes hold cannot be refunded too (read under the same lock that opens disputes).
      const disputed = await tx.disputes.heldAmount(order.id);
      const refund = planRefund(order, captured?.payment.id, inFlight, command, { id: deps.ids.newId(REFUND_ID_PREFIX), now: deps.clock.now() }, disputed);
      await tx.refunds.reserve(refund);
      return refund;
    },

    async settle(refundId) {
      const pending = await reads.refunds.findById(refundId);
      if (!pending || pending.status !== 'pending') return current(refundId);
      const record = (await deps.reads.payments.listForOrder(pending.orderId)).find((p) => p.payment.id === pending.paymentId);
      const captureRef = record?.payment.capture?.processorRef;
      const leg = record?.attempts.find((a) => a.status === 'succeeded');
      const processor = leg ? deps.routes.processorOf(leg.route) : undefined;
      // A bank transfer has no acquirer: the simulated bank sends the money back at once.
      let answer;
      try {
        answer = processor && captureRef ? await processor.refund(captureRef, pending.amount, pending.id) : { kind: 'succeeded' as const, processorRef: `bank_${pending.id}` };
      } catch (err) {
        // The acquirer did not answer: the refund stays pending, holding its amount, and the sweeper
        // (or a repeat with the same Idempotency-Key) asks again under the same id.
        deps.onBackgroundError(err);
        return current(refundId);
      }
      const merchant = await deps.merchants.merchantOf(pending.merchantId);
      await deps.uow.run(async (tx) => {
        const order = await tx.orders.lock(pending.orderId);
        const refund = await tx.refunds.lock(pending.id);
        if (!order || !refund || refund.status !== 'pending') return; // settled by another call meanwhile
        const now = deps.clock.now();
        // Accepted, not yet done (Adyen's refunds always are): the refund stays pending, holding its
        // amount, and the sweeper asks again under the same reference until the processor decides.
        if (answer.kind === 'pending') return;
        if (answer.kind === 'failed') {
          await tx.refunds.markFailed(refund, answer.declineCode, now);
          return;
        }
        await tx.refunds.markSucceeded(refund, answer.processorRef, now);
        const t = noteRefund(order, refund, deps.eventIds());
        await tx.orders.saveTransition(t.order);
        await tx.outbox.append(t.event);
        await tx.ledger.post(
          refundPosting({
            refundId: refund.id,
            paymentId: refund.paymentId,
            orderId: order.id,
            merchantId: order.merchantId,
            livemode: order.livemode,
            reference: order.reference,
            refunded: { amount: refund.amount, currency: refund.currency },
            refundedBefore: order.amountRefunded,
            settlementCurrency: merchant.settlementCurrency,
            from: order.settledAt ? 'merchant_available' : 'merchant_pending',
            at: now,
          }),
        );
      });
      return current(refundId);
    },

    async settleStale(limit) {
      const now = deps.clock.now();
      const ids = await deps.uow.run((tx) => tx.refunds.claimStale(new Date(now.getTime() - STALE_REFUND_MS), now, limit));
      let settled = 0;
      for (const id of ids) {
        try {
          await refundOrder.settle(id);
          settled += 1;
        } catch (err) {
          deps.onBackgroundError(err);
        }
      }
      return settled;
    },
  };
  return refundOrder;
}
