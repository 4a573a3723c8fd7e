import type { Order } from '../../order/domain/order.entity.ts';
import { isDueToExpire, markExpired } from '../../order/domain/order-transitions.ts';
import { isInFlight } from '../domain/attempt-policy.ts';
import type { EventIds } from '../../event/application/event-ids.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { Release } from './acquirer-release.ts';
import { attemptsOf } from './attempts-of.ts';
import type { CancelChallenges } from './challenge-cancellation.ts';

/** An open order's expiry, under its row lock. */
export interface OrderExpiry {
  /**
   * Expires the order in this transaction if its time has come, canceling any
   * open challenge; a payment in flight decides instead.
   */
  expireIfDue(tx: TransactionScope, order: Order, release: Release): Promise<Order>;
  /**
   * Expires the open order (its row locked by the caller) in this transaction, due or not:
   * order.expired, and any open challenge canceled (its authorization released after `tx`).
   * The caller has checked that no payment is in flight.
   */
  expire(tx: TransactionScope, order: Order, release: Release): Promise<Order>;
}

/** Builds the expiry over the clock, the event ids and the challenge cancellation. */
export function createOrderExpiry(deps: { readonly clock: Clock; readonly eventIds: EventIds; readonly cancelChallenges: CancelChallenges }): OrderExpiry {
  async function expire(tx: TransactionScope, order: Order, release: Release): Promise<Order> {
    const t = markExpired(order, deps.eventIds());
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    await deps.cancelChallenges(tx, order.id, 'order_expired', release);
    return t.order;
  }
  return {
    async expireIfDue(tx, order, release) {
      if (!isDueToExpire(order, deps.clock.now())) return order;
      const attempts = await attemptsOf(tx.payments, order.id);
      if (attempts.some((a) => isInFlight(a, deps.clock.now()))) return order;
      return expire(tx, order, release);
    },
    expire,
  };
}
