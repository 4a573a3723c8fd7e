// The contracts of RefundRepository and CaptureRequests (src/modules/refund/ports/, src/modules/capture/ports/), which
// every adapter passes: the Postgres repositories and the in-memory fakes (test/storage-ports.contract.test.ts).
import { describe, expect, test } from 'vitest';
import { ConflictError } from '../../src/kernel/ports/errors.ts';
import { aDispute, aRefund, givenMerchant, givenPaidOrder } from '../support/builders.ts';
import type { StoreUnderTest } from './stores.ts';

/** Runs the RefundRepository contract against the store `store()` answers. */
export function refundRepositoryContract(store: () => StoreUnderTest): void {
  describe('RefundRepository', () => {
    async function paid() {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { order, payment } = await givenPaidOrder(s, merchant);
      return { s, order, paymentId: payment.payment.id };
    }

    test('a reserved refund is pending, found, listed, and holds its amount on the order', async () => {
      const { s, order, paymentId } = await paid();
      const refund = aRefund(order, paymentId, { amount: 700n });
      await s.uow.run((tx) => tx.refunds.reserve(refund));
      expect(await s.reads.refunds.findById(refund.id)).toEqual(refund);
      expect(await s.reads.refunds.listForOrder(order.id)).toEqual([refund]);
      expect(await s.reads.refunds.listForOrders([order.id, 'ord_none'])).toEqual(new Map([[order.id, [refund]]]));
      expect(await s.reads.refunds.pendingAmount(order.id)).toBe(700n);
      expect(await s.reads.refunds.pendingAmount('ord_none')).toBe(0n);
    });

    test('refuses a reservation past what the order captured, whatever raced, and stores nothing of it', async () => {
      const { s, order, paymentId } = await paid();
      await s.uow.run((tx) => tx.refunds.reserve(aRefund(order, paymentId, { amount: 2000n })));
      const tooMuch = aRefund(order, paymentId, { amount: 501n });
      await expect(s.uow.run((tx) => tx.refunds.reserve(tooMuch))).rejects.toThrow();
      expect(await s.reads.refunds.findById(tooMuch.id)).toBeUndefined();
      expect(await s.reads.refunds.pendingAmount(order.id)).toBe(2000n);
    });

    test('settling releases the reservation; a refund no longer pending cannot be settled again', async () => {
      const { s, order, paymentId } = await paid();
      const ok = aRefund(order, paymentId, { amount: 300n });
      const refused = aRefund(order, paymentId, { amount: 200n });
      await s.uow.run(async (tx) => {
        await tx.refunds.reserve(ok);
        await tx.refunds.reserve(refused);
      });
      const now = new Date('2026-03-02T12:00:00.000Z');
      await s.uow.run((tx) => tx.refunds.markSucceeded(ok, 'ref_ok', now));
      await s.uow.run((tx) => tx.refunds.markFailed(refused, 'card_declined', now));
      expect(await s.reads.refunds.findById(ok.id)).toEqual({ ...ok, status: 'succeeded', processorRef: 'ref_ok' });
      expect(await s.reads.refunds.findById(refused.id)).toEqual({ ...refused, status: 'failed', failureCode: 'card_declined' });
      expect(await s.reads.refunds.pendingAmount(order.id)).toBe(0n);
      await expect(s.uow.run((tx) => tx.refunds.markSucceeded(ok, 'ref_again', now))).rejects.toThrow(/no longer pending/);
      expect(await s.reads.refunds.pendingAmount(order.id)).toBe(0n);
    });

    test('claims refunds pending since before a time, leasing them until they are stale again', async () => {
      const { s, order, paymentId } = await paid();
      const refund = aRefund(order, paymentId);
      await s.uow.run((tx) => tx.refunds.reserve(refund));
      const mine = (ids: string[]) => ids.filter((id) => id === refund.id);
      const created = refund.createdAt.getTime();
      expect(mine(await s.uow.run((tx) => tx.refunds.claimStale(new Date(created), new Date(created + 1000), 1000)))).toEqual([]);
      const now = new Date(created + 120_000);
      expect(mine(await s.uow.run((tx) => tx.refunds.claimStale(new Date(created + 60_000), now, 1000)))).toEqual([refund.id]);
      // Leased until now: a sweep with the same cut-off skips it.
      expect(mine(await s.uow.run((tx) => tx.refunds.claimStale(new Date(created + 60_000), now, 1000)))).toEqual([]);
      expect(mine(await s.uow.run((tx) => tx.refunds.claimStale(new Date(now.getTime() + 1), now, 1000)))).toEqual([refund.id]);
    });
  });

  describe('DisputeRepository (what refunds and voids read)', () => {
    test('an opened dispute holds its amount on the order and is listed with it', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { order, payment } = await givenPaidOrder(s, merchant);
      const dispute = aDispute(order, payment.payment.id, { amount: 900n });
      await s.uow.run((tx) => tx.disputes.open(dispute));
      expect(await s.reads.disputes.heldAmount(order.id)).toBe(900n);
      expect(await s.reads.disputes.heldAmount('ord_none')).toBe(0n);
      expect((await s.reads.disputes.listForOrders([order.id, 'ord_none'])).get(order.id)?.map((d) => [d.id, d.amount, d.status])).toEqual([[dispute.id, 900n, 'needs_response']]);
      expect((await s.reads.disputes.listForOrders(['ord_none'])).size).toBe(0);
    });
  });

  describe('CaptureRequests', () => {
    test('one request per order: added, found, refused twice, removed; stale ones oldest first', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { order, payment } = await givenPaidOrder(s, merchant);
      const request = { orderId: order.id, paymentId: payment.payment.id, amount: 1000n, requestedAt: new Date('2026-03-02T10:00:00.000Z') };
      await s.uow.run((tx) => tx.captures.add(request));
      expect(await s.reads.captures.find(order.id)).toEqual(request);
      await expect(s.uow.run((tx) => tx.captures.add({ ...request, amount: 5n }))).rejects.toBeInstanceOf(ConflictError);
      const stale = await s.reads.captures.stale(new Date('2026-03-02T10:00:01.000Z'), 1000);
      expect(stale).toContain(order.id);
      expect(await s.reads.captures.stale(request.requestedAt, 1000)).not.toContain(order.id);
      await s.uow.run((tx) => tx.captures.remove(order.id));
      expect(await s.reads.captures.find(order.id)).toBeUndefined();
    });
  });
}
