import type { Scope } from '../../merchant/domain/caller.ts';
import { planCapture } from '../../order/domain/capture.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import { markCaptured } from '../../payment/domain/payment.entity.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { MerchantCache } from '../../payment/application/merchant-cache.ts';
import type { PaymentRecorder } from '../../payment/application/payment-recorder.ts';
import type { RouteRegistry } from '../../payment/application/route-registry.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';

/**
 * Captures authorized orders (capture method manual), in three steps so that a process stopping at
 * any point loses nothing: a request committed under the order's lock, the acquirer asked, the
 * capture recorded. A stop after the acquirer captured leaves the request, which the sweeper
 * finishes (the acquirer's capture of one authorization is idempotent).
 */
export interface CaptureOrder {
  /**
   * Decides a capture of `amount` (all that was authorized when undefined) under the order's row
   * lock, in `tx` (the Idempotency-Key's transaction), and records the request. While it stands, the
   * order can be neither captured again, voided, nor released.
   * @throws ApplicationError order.not_found; DomainError capture.order_not_capturable (not
   *   authorized, ran out, or a capture of it under way), capture.exceeds_authorized,
   *   money.amount_invalid, money.amount_too_large
   */
  request(tx: TransactionScope, scope: Scope, orderId: string, amount: bigint | undefined): Promise<Order>;
  /**
   * Asks the acquirer for the order's requested capture, then records it: the payment succeeds,
   * the order becomes paid with order.paid, and the capture's ledger transaction (fees on the amount
   * captured) is posted, in one transaction, and the request ends. An acquirer that does not answer
   * leaves the request for the sweeper. No request: nothing to do. Answers whether the request ended.
   * @throws DomainError capture.declined (the request ends; the order stays authorized)
   */
  complete(orderId: string): Promise<boolean>;
  /** Finishes requests a stopped process left for over a minute (the sweeper's job); answers how many. */
  completeStale(limit: number): Promise<number>;
}

/** How long a capture request may stand before the sweeper finishes it: well past any acquirer call. */
export const STALE_CAPTURE_MS = 60_000;

/** What capturing runs on: the routes' processors, and the payment recorder's ledger posting. */
export interface CaptureOrderDeps {
  readonly uow: UnitOfWork;
  readonly reads: { readonly payments: Pick<PaymentRepository, 'listForOrder'> };
  readonly clock: Clock;
  readonly routes: Pick<RouteRegistry, 'processorOf'>;
  readonly merchants: Pick<MerchantCache, 'merchantIn'>;
  readonly recorder: Pick<PaymentRecorder, 'recordPaid'>;
  /** An acquirer that did not answer, or a stale request that could not be finished. */
  readonly onBackgroundError: (err: unknown) => void;
}

/** Creates the capture use case over the routes' processors and the payment recorder. */
export function createCaptureOrder(deps: CaptureOrderDeps): CaptureOrder {

  const captureOrder: CaptureOrder = {
    async request(tx, scope, orderId, amount) {
      const found = await tx.orders.findById(scope, orderId);
      if (!found) throw new ApplicationError('order.not_found', `No such order: "${orderId}".`, 'id');
      const order: Order = (await tx.orders.lock(found.id))!;
      if (await tx.captures.find(order.id)) {
        throw new DomainError('capture.order_not_capturable', `A capture of order ${order.id} is under way; its answer shows on the order.`);
      }
      const now = deps.clock.now();
      const captured = planCapture(order, amount, now);
      const record = (await tx.payments.listForOrder(order.id)).find((p) => p.payment.status === 'authorized');
      if (!record) throw new Error(`authorized order ${order.id} has no authorized payment`);
      await tx.captures.add({ orderId: order.id, paymentId: record.payment.id, amount: captured, requestedAt: now });
      return order;
    },

    async complete(orderId) {
      const request = await deps.uow.run((tx) => tx.captures.find(orderId));
      if (!request) return false;
      const record = (await deps.reads.payments.listForOrder(orderId)).find((p) => p.payment.id === request.paymentId);
      const leg = record?.attempts.find((a) => a.status === 'authorized');
      const processor = leg && deps.routes.processorOf(leg.route);
      if (!record || !leg?.processorRef || !processor) throw new Error(`capture request of ${orderId} names no authorized payment on a known route`);
      let answer;
      try {
        answer = await processor.capture(leg.processorRef, request.amount, `${leg.id}/capture/${request.requestedAt.getTime()}`);
      } catch (err) {
        // The acquirer did not answer: the request stands, and the sweeper asks again.
        deps.onBackgroundError(err);
        return false;
      }
      // Accepted, not yet done: the request stands and the sweeper asks again under the same reference.
      if (answer.kind === 'pending') return false;
      if (answer.kind === 'failed') {
        await deps.uow.run((tx) => tx.captures.remove(orderId));
        throw new DomainError('capture.declined', `The acquirer declined the capture of order ${orderId} (${answer.declineCode}); the order stays authorized.`);
      }
      await deps.uow.run(async (tx) => {
        const order = await tx.orders.lock(orderId);
        const still = await tx.captures.find(orderId);
        if (!order || !still || order.status !== 'authorized') return; // recorded by another call meanwhile
        const now = deps.clock.now();
        await tx.payments.markCaptured(markCaptured({ payment: record.payment, leg }, { processorRef: answer.processorRef, amount: still.amount, capturedAt: now }, leg.authentication, now));
        const merchant = await deps.merchants.merchantIn(tx, order.merchantId);
        await deps.recorder.recordPaid(tx, order, { id: record.payment.id, method: record.payment.method }, merchant, now, still.amount);
        await tx.captures.remove(orderId);
      });
      return true;
    },

    async completeStale(limit) {
      const now = deps.clock.now();
      const orders = await deps.uow.run((tx) => tx.captures.stale(new Date(now.getTime() - STALE_CAPTURE_MS), limit));
      let done = 0;
      for (const orderId of orders) {
        try {
          if (await captureOrder.complete(orderId)) done++;
        } catch (err) {
          deps.onBackgroundError(err);
        }
      }
      return done;
    },
  };
  return captureOrder;
}
