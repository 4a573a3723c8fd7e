import { holdForReversal, markReversed } from '../../payment/domain/payment.entity.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { PaymentChange } from '../../payment/domain/payment.entity.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { AcquirerRelease } from '../../payment/application/acquirer-release.ts';
import type { PaymentRecorder } from '../../payment/application/payment-recorder.ts';
import type { Reverse } from '../../payment/application/reversal.ts';
import type { RouteRegistry } from '../../payment/application/route-registry.ts';
import type { PaymentAttempt } from '../../payment/domain/payment-attempt.entity.ts';
import { releaseAuthorization, type ReleaseAuthorizationDeps } from '../../capture/application/release-authorization.ts';

/** What a void decided: the order, and what is left to do at the acquirer once its transaction commits. */
export interface HeldVoid {
  readonly order: Order;
  /** A captured payment to reverse (a paid order). */
  readonly reversal: PaymentChange | undefined;
  /** Authorizations to release (an authorized order, voided already). */
  readonly releases: readonly PaymentAttempt[];
}

/** Voids paid orders before settlement, and authorized ones: decide and hold (in the caller's transaction), then reverse or release at the acquirer. */
export interface VoidOrder {
  /**
   * Under the order's row lock: a voided order is answered as it is; an authorized order is voided
   * at once (its authorization to release); a paid order with nothing refunded has its payment held
   * for reversal (which also stops any refund of it), or, paid by a transfer, is voided at once.
   * @throws ApplicationError order.not_found; DomainError void.order_not_voidable, void.order_already_settled
   */
  hold(tx: TransactionScope, scope: Scope, orderId: string): Promise<HeldVoid>;
  /** Reverses a held payment at its acquirer and records the void; a failure leaves it to the sweeper, which retries. */
  reverse(reversal: PaymentChange): Promise<void>;
  /** Releases authorizations at their acquirer (after the void committed); a failure leaves a hold that lapses by itself. */
  release(legs: readonly PaymentAttempt[]): Promise<void>;
}

/** What voiding runs on: the routes' processors, the reversal the sweeper also finishes, and the release of authorizations. */
export interface VoidOrderDeps extends ReleaseAuthorizationDeps {
  readonly routes: Pick<RouteRegistry, 'processorOf'>;
  readonly recorder: Pick<PaymentRecorder, 'recordVoid'>;
  readonly reverse: Reverse;
  readonly release: Pick<AcquirerRelease, 'voidAll'>;
}

/** Creates the void use case. */
export function createVoidOrder(deps: VoidOrderDeps): VoidOrder {
  return {
    async hold(tx, scope, orderId) {
      const found = await tx.orders.findById(scope, orderId);
      if (!found) throw new ApplicationError('order.not_found', `No such order: "${orderId}".`, 'id');
      const order = (await tx.orders.lock(found.id))!;
      if (order.status === 'voided') return { order, reversal: undefined, releases: [] };
      if (order.status === 'authorized') {
        if (await tx.captures.find(order.id)) {
          throw new DomainError('void.order_not_voidable', `A capture of order ${order.id} is under way: it can no longer be voided. Refund it once captured.`);
        }
        const releases: PaymentAttempt[] = [];
        return { order: await releaseAuthorization(deps, tx, order, 'requested', (leg) => releases.push(leg)), reversal: undefined, releases };
      }
      if (order.settledAt) {
        throw new DomainError('void.order_already_settled', `Order ${order.id} was settled on ${order.settledAt.toISOString()}: its money has left the pending balance. Refund it instead.`);
      }
      const pendingRefunds = await tx.refunds.pendingAmount(order.id);
      // A disputed order's money is held in the dispute reserve: undoing its capture would take it twice.
      if (order.status === 'paid' && (await tx.disputes.listForOrders([order.id])).has(order.id)) {
        throw new DomainError('void.order_not_voidable', `Order ${order.id} is disputed: a disputed payment cannot be voided. Answer the dispute, and refund what remains if you must.`);
      }
      if (order.status !== 'paid' || order.amountRefunded > 0n || pendingRefunds > 0n) {
        const hint = order.status === 'partially_refunded' || order.status === 'refunded' || pendingRefunds > 0n ? ' It has refunds: refund the rest instead.' : '';
        throw new DomainError('void.order_not_voidable', `Order ${order.id} is ${order.status}: only an authorized order, or a paid one with nothing refunded, can be voided.${hint}`);
      }
      const record = (await tx.payments.listForOrder(order.id)).find((p) => p.payment.status === 'succeeded');
      const leg = record?.attempts.find((a) => a.status === 'succeeded');
      const change = leg && (await tx.payments.findByAttempt(order.id, leg.id));
      if (!record || !change) {
        // A reversal of this order's payment is already under way (a void whose acquirer has not answered yet).
        return { order, reversal: undefined, releases: [] };
      }
      const now = deps.clock.now();
      const captureRef = record.payment.capture?.processorRef ?? change.leg.processorRef;
      if (!deps.routes.processorOf(change.leg.route) || !captureRef) {
        // A bank transfer has no acquirer: the simulated bank returns it at once.
        await tx.payments.markReversed(markReversed(holdForReversal(change, captureRef ?? `bank_${change.leg.id}`, 'order_voided', change.leg.authentication, now), now));
        return { order: await deps.recorder.recordVoid(tx, order, record.payment.id), reversal: undefined, releases: [] };
      }
      const held = holdForReversal(change, captureRef, 'order_voided', change.leg.authentication, now);
      await tx.payments.holdForReversal(held);
      return { order, reversal: held, releases: [] };
    },

    async reverse(reversal) {
      await deps.reverse(reversal);
    },

    async release(legs) {
      await deps.release.voidAll(legs);
    },
  };
}
