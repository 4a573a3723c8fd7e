// The contract of OrderRepository and OrderCreationStore (src/modules/order/ports/), which every adapter passes:
// the Postgres repositories and the in-memory fakes (test/storage-ports.contract.test.ts).
import { describe, expect, test } from 'vitest';
import { markExpired, markPaid } from '../../src/modules/order/domain/order-transitions.ts';
import { ConflictError, UnknownCursorError } from '../../src/kernel/ports/errors.ts';
import { anOrder, asStored, givenAuthorizedOrder, givenMerchant, givenOrder, unique } from '../support/builders.ts';
import type { StoreUnderTest } from './stores.ts';

const ids = () => ({ eventId: unique('evt_'), now: new Date('2026-03-02T10:05:00.000Z') });

/** Runs the OrderRepository contract against the store `store()` answers. */
export function orderRepositoryContract(store: () => StoreUnderTest): void {
  describe('OrderRepository', () => {
    test('finds an order only in its merchant and mode; the checkout finds it by id alone', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { merchant: other } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      expect(await s.reads.orders.findById({ merchantId: merchant.id, livemode: false }, order.id)).toEqual(order);
      expect(await s.reads.orders.findById({ merchantId: merchant.id, livemode: true }, order.id)).toBeUndefined();
      expect(await s.reads.orders.findById({ merchantId: other.id, livemode: false }, order.id)).toBeUndefined();
      expect(await s.reads.orders.findForCheckout(order.id)).toEqual(order);
      expect(await s.reads.orders.findForCheckout('ord_missing')).toBeUndefined();
    });

    test('lists newest first in pages, filtered by reference, from a cursor of the scope only', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { merchant: other } = await givenMerchant(s);
      const made = [];
      for (const reference of ['A', 'B', 'A', 'C']) {
        s.clock.advance(1000);
        made.push(await givenOrder(s, merchant, { command: { reference } }));
      }
      const foreign = await givenOrder(s, other);
      const scope = { merchantId: merchant.id, livemode: false };
      const first = await s.reads.orders.list(scope, { limit: 3, startingAfter: undefined, reference: undefined });
      expect(first.orders.map((o) => o.id)).toEqual([made[3]!.id, made[2]!.id, made[1]!.id]);
      expect(first.hasMore).toBe(true);
      const rest = await s.reads.orders.list(scope, { limit: 3, startingAfter: made[1]!.id, reference: undefined });
      expect(rest).toEqual({ orders: [made[0]], hasMore: false });
      const a = await s.reads.orders.list(scope, { limit: 10, startingAfter: undefined, reference: 'A' });
      expect(a.orders.map((o) => o.id)).toEqual([made[2]!.id, made[0]!.id]);
      await expect(s.reads.orders.list(scope, { limit: 3, startingAfter: foreign.id, reference: undefined })).rejects.toBeInstanceOf(UnknownCursorError);
      await expect(s.reads.orders.list(scope, { limit: 3, startingAfter: 'ord_nothing', reference: undefined })).rejects.toBeInstanceOf(UnknownCursorError);
    });

    test('stores a transition from the version before it, and refuses one from a stale version', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      const paid = markPaid(order, { method: 'card', settlement: { amount: 2400n, currency: 'EUR' } }, ids()).order;
      await s.uow.run((tx) => tx.orders.saveTransition(paid));
      expect(await s.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'paid', method: 'card', amountCaptured: 2500n, settlement: { amount: 2400n, currency: 'EUR' }, version: 2 });
      // Computed from version 1 again: another request moved the order on first.
      const stale = markExpired(order, ids()).order;
      await expect(s.uow.run((tx) => tx.orders.saveTransition(stale))).rejects.toBeInstanceOf(ConflictError);
      expect(await s.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'paid', version: 2 });
    });

    test('a transition changes only what transitions may change', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      const paid = markPaid(order, { method: 'card', settlement: { amount: 2400n, currency: 'EUR' } }, ids()).order;
      await s.uow.run((tx) => tx.orders.saveTransition({ ...paid, reference: 'CHANGED', amount: 1n }));
      expect(await s.reads.orders.findForCheckout(order.id)).toMatchObject({ reference: order.reference, amount: order.amount, status: 'paid' });
    });

    test('locks open orders due to expire, soonest first, up to the limit', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const now = s.clock.now();
      const at = (minutes: number) => new Date(now.getTime() + minutes * 60_000);
      const late = await givenOrder(s, merchant, { command: { expiresAt: at(10) } });
      const soon = await givenOrder(s, merchant, { command: { expiresAt: at(6) } });
      const notYet = await givenOrder(s, merchant, { command: { expiresAt: at(60) } });
      const expired = await givenOrder(s, merchant, { command: { expiresAt: at(7) } });
      await s.uow.run((tx) => tx.orders.saveTransition(markExpired(expired, ids()).order));
      const mine = (orders: { id: string; merchantId: string }[]) => orders.filter((o) => o.merchantId === merchant.id).map((o) => o.id);
      const due = await s.uow.run((tx) => tx.orders.lockDueToExpire(at(30), 100));
      expect(mine(due)).toEqual([soon.id, late.id]);
      expect(mine(due)).not.toContain(notYet.id);
      expect(await s.uow.run((tx) => tx.orders.lockDueToExpire(at(30), 1))).toHaveLength(1);
    });

    test('locks authorizations that ran out, except those with a capture asked', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const ranOut = await givenAuthorizedOrder(s, merchant);
      const capturing = await givenAuthorizedOrder(s, merchant);
      await s.uow.run((tx) => tx.captures.add({ orderId: capturing.order.id, paymentId: capturing.payment.payment.id, amount: 100n, requestedAt: s.clock.now() }));
      const later = new Date(ranOut.order.authorizationExpiresAt!.getTime() + 1000);
      const due = (await s.uow.run((tx) => tx.orders.lockAuthorizationsDue(later, 100))).filter((o) => o.merchantId === merchant.id);
      expect(due.map((o) => o.id)).toEqual([ranOut.order.id]);
      const before = (await s.uow.run((tx) => tx.orders.lockAuthorizationsDue(s.clock.now(), 100))).filter((o) => o.merchantId === merchant.id);
      expect(before).toEqual([]);
    });
  });

  describe('OrderCreationStore', () => {
    test('stores the order with its event; with a key, a repeat answers the first order and writes nothing', async () => {
      const s = store();
      const { merchant, caller } = await givenMerchant(s);
      const first = anOrder(merchant);
      const claim = (order: typeof first.order) => ({ scope: caller, key: unique('key-'), operation: 'orders.create', fingerprint: 'f1', order });
      const keyed = claim(first.order);
      expect(await s.orderCreation.create(keyed, first.order, first.event)).toEqual({ claimed: true });
      expect(await s.reads.orders.findForCheckout(first.order.id)).toEqual(asStored(first.order));
      const second = anOrder(merchant);
      const again = await s.orderCreation.create({ ...keyed, order: second.order }, second.order, second.event);
      expect(again).toEqual({ claimed: false, existing: { ...keyed, order: asStored(first.order) } });
      expect(await s.reads.orders.findForCheckout(second.order.id)).toBeUndefined();
      // The key is the merchant's in one mode: the same key in live mode is free.
      const live = anOrder(merchant, { livemode: true });
      expect(await s.orderCreation.create({ ...keyed, scope: { ...caller, livemode: true }, order: live.order }, live.order, live.event)).toEqual({ claimed: true });
    });

    test('a key held by another request answers that request\'s operation and fingerprint', async () => {
      const s = store();
      const { merchant, caller } = await givenMerchant(s);
      const first = anOrder(merchant);
      const key = unique('key-');
      await s.orderCreation.create({ scope: caller, key, operation: 'orders.create', fingerprint: 'f1', order: first.order }, first.order, first.event);
      const second = anOrder(merchant, { command: { amount: 999n } });
      const answer = await s.orderCreation.create({ scope: caller, key, operation: 'orders.create', fingerprint: 'f2', order: second.order }, second.order, second.event);
      expect(answer).toMatchObject({ claimed: false, existing: { operation: 'orders.create', fingerprint: 'f1', order: { id: first.order.id } } });
    });
  });
}
