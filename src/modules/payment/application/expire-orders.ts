import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { AcquirerRelease } from './acquirer-release.ts';
import type { OrderExpiry } from './order-expiry.ts';

/** Expires up to limit open orders past their time; answers how many it expired. */
export type ExpireOrders = (limit: number) => Promise<number>;

/**
 * Creates the expiry sweep: orders past their time become expired (with
 * order.expired, an open challenge canceled) even when nobody opens their
 * checkout; an order whose payment is in flight is left to that payment.
 * Rows another sweeper holds are skipped.
 */
export function createExpireOrders(deps: { readonly clock: Clock; readonly release: Pick<AcquirerRelease, 'inTransaction'>; readonly expiry: Pick<OrderExpiry, 'expireIfDue'> }): ExpireOrders {
  return (limit) =>
    deps.release.inTransaction(async (tx, release) => {
      const due = await tx.orders.lockDueToExpire(deps.clock.now(), limit);
      let expired = 0;
      for (const order of due) if ((await deps.expiry.expireIfDue(tx, order, release)).status === 'expired') expired += 1;
      return expired;
    });
}
