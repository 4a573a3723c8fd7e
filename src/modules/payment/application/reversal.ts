import { noteReversal } from '../../order/domain/order-transitions.ts';
import { markReversed, type PaymentChange } from '../domain/payment.entity.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { PaymentRecorder } from './payment-recorder.ts';
import type { RouteRegistry } from './route-registry.ts';

/** A reversal the payment use cases left pending is retried by the sweep only after this long. */
export const REVERSAL_RETRY_MS = 30_000;

/**
 * Undoes at the acquirer what a payment held for reversal left there, then records it reversed with
 * order.payment_reversed (order.voided for a void's). Answers whether it was reversed; a failure at
 * the acquirer is reported and leaves the reversal pending for the sweep.
 */
export type Reverse = (pending: PaymentChange) => Promise<boolean>;

/** Builds the reversal over the processors of the routes. */
export function createReverse(deps: {
  readonly uow: UnitOfWork;
  readonly routes: Pick<RouteRegistry, 'processorOf'>;
  readonly clock: Clock;
  readonly eventIds: EventIds;
  readonly recorder: Pick<PaymentRecorder, 'recordVoid'>;
  /** A reversal at an acquirer that failed: it stays pending and the recovery sweep retries it. */
  readonly onBackgroundError: (err: unknown) => void;
}): Reverse {
  return async (pending) => {
    const { leg } = pending;
    const processor = deps.routes.processorOf(leg.route);
    try {
      if (!processor || !leg.processorRef) throw new Error(`attempt ${leg.id} cannot be reversed: no route ${leg.route} or no processor reference`);
      const undone = await processor.reverse(leg.processorRef, pending.payment.amount, `${leg.id}/${leg.processorRef}`);
      if (undone.kind === 'failed') throw new Error(`reversal of ${leg.id} on ${leg.route} failed: ${undone.declineCode} (${undone.processorCode})`);
      // Accepted but not yet done: the reversal stays pending and the sweep asks again (same reference, no second reversal).
      if (undone.kind === 'pending') return false;
    } catch (err) {
      deps.onBackgroundError(err);
      return false;
    }
    await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(leg.orderId);
      const current = order && (await tx.payments.findByAttempt(order.id, leg.id));
      if (!order || current?.leg.status !== 'reversal_pending') return; // another sweeper finished it first
      await tx.payments.markReversed(markReversed(current, deps.clock.now()));
      if (current.leg.cancellationReason === 'order_voided') {
        await deps.recorder.recordVoid(tx, order, current.payment.id);
        return;
      }
      const t = noteReversal(order, { attemptId: leg.id, method: leg.method, route: leg.route, reason: current.leg.cancellationReason ?? 'attempt_abandoned' }, deps.eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
    });
    return true;
  };
}
