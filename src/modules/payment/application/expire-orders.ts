import type { PaymentKit } from './payment-kit.ts';

/** Expires up to limit open orders past their time; answers how many it expired. */
export type ExpireOrders = (limit: number) => Promise<number>;

/**
 * Creates the expiry sweep: orders past their time become expired (with
 * order.expired, an open challenge canceled) even when nobody opens their
 * checkout; an order whose payment is in flight is left to that payment.
 * Rows another sweeper holds are skipped.
 */
export function createExpireOrders(kit: PaymentKit): ExpireOrders {
  return (limit) =>
    kit.inTransaction(async (tx, release) => {
      const due = await tx.orders.lockDueToExpire(kit.deps.clock.now(), limit);
      let expired = 0;
      for (const order of due) if ((await kit.expireIfDue(tx, order, release)).status === 'expired') expired += 1;
      return expired;
    });
}
