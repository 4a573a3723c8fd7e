// The contract of PaymentRepository (src/modules/payment/ports/payment-repository.port.ts), which every adapter
// passes: the Postgres repository and the in-memory fake (test/storage-ports.contract.test.ts).
import { describe, expect, test } from 'vitest';
import { cancel, markCaptured, recordAuthorization, recordDecline, requireAuthentication, retryOnAlternative } from '../../src/modules/payment/domain/payment.entity.ts';
import { ConflictError } from '../../src/kernel/ports/errors.ts';
import { aCardPayment, givenMerchant, givenOrder, unique } from '../support/builders.ts';
import type { StoreUnderTest } from './stores.ts';

/** Runs the PaymentRepository contract against the store `store()` answers. */
export function paymentRepositoryContract(store: () => StoreUnderTest): void {
  describe('PaymentRepository', () => {
    async function started() {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      const change = aCardPayment(order, { now: s.clock.now() });
      await s.uow.run((tx) => tx.payments.start(change));
      return { s, merchant, order, change };
    }

    test('a started payment is found by id (in its scope only), by attempt, by submission and by order', async () => {
      const { s, merchant, order, change } = await started();
      const record = { payment: change.payment, attempts: [change.leg] };
      expect(await s.reads.payments.findById({ merchantId: merchant.id, livemode: false }, change.payment.id)).toEqual(record);
      expect(await s.reads.payments.findById({ merchantId: merchant.id, livemode: true }, change.payment.id)).toBeUndefined();
      expect(await s.reads.payments.findByAttempt(order.id, change.leg.id)).toEqual(change);
      expect(await s.reads.payments.findByAttempt('ord_other', change.leg.id)).toBeUndefined();
      expect(await s.reads.payments.findBySubmission(order.id, change.payment.submissionId!)).toEqual(record);
      expect(await s.reads.payments.listForOrder(order.id)).toEqual([record]);
      expect(await s.reads.payments.listAttemptsForOrders([order.id, 'ord_none'])).toEqual(new Map([[order.id, [change.leg]]]));
    });

    test('one payment per submission: a second start of it is a conflict', async () => {
      const { s, order, change } = await started();
      const again = aCardPayment(order, { submissionId: change.payment.submissionId, now: s.clock.now() });
      await expect(s.uow.run((tx) => tx.payments.start(again))).rejects.toBeInstanceOf(ConflictError);
      expect(await s.reads.payments.listForOrder(order.id)).toHaveLength(1);
    });

    test('one succeeded payment per order: capturing a second is a conflict', async () => {
      const { s, order, change } = await started();
      const now = s.clock.now();
      const capture = (c: typeof change) => markCaptured(c, { processorRef: unique('cap_'), amount: order.amount, capturedAt: now }, 'not_required', now);
      await s.uow.run((tx) => tx.payments.markCaptured(capture(change)));
      const second = aCardPayment(order, { now });
      await s.uow.run((tx) => tx.payments.start(second));
      await expect(s.uow.run((tx) => tx.payments.markCaptured(capture(second)))).rejects.toBeInstanceOf(ConflictError);
      expect((await s.reads.payments.findByAttempt(order.id, second.leg.id))?.payment.status).toBe('processing');
    });

    test('each named change writes its own fields: a challenge, its cancellation, a capture', async () => {
      const { s, order, change } = await started();
      const now = new Date(s.clock.now().getTime() + 1000);
      const challenged = requireAuthentication(change, 'ref_1', { url: 'https://issuer.example/3ds', method: 'GET', fields: {} }, '123456', now);
      await s.uow.run((tx) => tx.payments.recordChallenge(challenged));
      expect(await s.reads.payments.findByAttempt(order.id, change.leg.id)).toEqual(challenged);
      // cancel writes status and reason, not a processor reference it was handed.
      const canceled = cancel({ ...challenged, leg: { ...challenged.leg, processorRef: 'ignored' } }, 'order_expired', now);
      await s.uow.run((tx) => tx.payments.cancel(canceled));
      const stored = await s.reads.payments.findByAttempt(order.id, change.leg.id);
      expect(stored?.leg).toMatchObject({ status: 'canceled', cancellationReason: 'order_expired', processorRef: 'ref_1', challengeTestCode: '123456' });
      expect(stored?.payment.status).toBe('canceled');
    });

    test('a capture is kept on the payment with its reference and amount', async () => {
      const { s, order, change } = await started();
      const now = s.clock.now();
      const authorized = recordAuthorization(change, 'auth_1', now);
      await s.uow.run((tx) => tx.payments.recordAuthorization(authorized));
      const captured = markCaptured(authorized, { processorRef: 'cap_1', amount: 2000n, capturedAt: now }, 'passed', now);
      await s.uow.run((tx) => tx.payments.markCaptured(captured));
      const stored = (await s.reads.payments.listForOrder(order.id))[0]!;
      expect(stored.payment).toMatchObject({ status: 'succeeded', capture: { processorRef: 'cap_1', amount: 2000n, capturedAt: now } });
      expect(stored.attempts[0]).toMatchObject({ status: 'succeeded', processorRef: 'cap_1', authentication: 'passed' });
    });

    test('a soft decline goes on as a retry leg; the record lists the first leg first', async () => {
      const { s, order, change } = await started();
      const now = new Date(s.clock.now().getTime() + 1000);
      const retry = retryOnAlternative(change, 'issuer_unavailable', { attemptId: unique('att_'), route: 'scripted_alternative', now });
      await s.uow.run((tx) => tx.payments.retryOnAlternative(retry));
      const record = (await s.reads.payments.listForOrder(order.id))[0]!;
      expect(record.attempts.map((a) => [a.route, a.status, a.retry, a.declineCode])).toEqual([
        ['scripted_primary', 'failed', false, 'issuer_unavailable'],
        ['scripted_alternative', 'processing', true, null],
      ]);
      expect(record.payment.status).toBe('processing');
    });

    test('a change to an attempt that does not exist writes nothing and throws', async () => {
      const { s, order, change } = await started();
      const ghost = { payment: change.payment, leg: { ...change.leg, id: unique('att_') } };
      await expect(s.uow.runAlone((tx) => tx.payments.recordDecline(recordDecline(ghost, 'do_not_honor', 'not_required', s.clock.now())))).rejects.toThrow();
      expect((await s.reads.payments.listForOrder(order.id))[0]!.payment.status).toBe('processing');
    });

    test('tallies first legs since a time, processing ones counted as declines, per client address and per merchant', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      const address = `10.9.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
      const since = s.clock.now();
      const at = (ms: number) => new Date(since.getTime() + ms);
      const declined = aCardPayment(order, { clientAddress: address, now: at(1000) });
      const processing = aCardPayment(order, { clientAddress: address, now: at(2000) });
      const old = aCardPayment(order, { clientAddress: address, now: at(-1000) });
      await s.uow.run(async (tx) => {
        for (const p of [declined, processing, old]) await tx.payments.start(p);
        await tx.payments.recordDecline(recordDecline(declined, 'do_not_honor', 'not_required', at(1500)));
        await tx.payments.retryOnAlternative(retryOnAlternative(processing, 'issuer_unavailable', { attemptId: unique('att_'), route: 'scripted_alternative', now: at(2500) }));
      });
      // The retry leg is not a customer submission; its failed first leg counts as a decline.
      expect(await s.reads.payments.tally({ clientAddress: address }, since)).toEqual({ attempts: 2, declines: 2 });
      expect(await s.reads.payments.tally({ merchantId: merchant.id, livemode: false }, since)).toEqual({ attempts: 2, declines: 2 });
      expect(await s.reads.payments.tally({ merchantId: merchant.id, livemode: true }, since)).toEqual({ attempts: 0, declines: 0 });
    });

    test('claims legs left processing, leasing them so that a second sweep skips them', async () => {
      const { s, order, change } = await started();
      const later = new Date(change.leg.updatedAt.getTime() + 5 * 60_000);
      const before = { processing: new Date(later.getTime() - 60_000), reversal: new Date(later.getTime() - 60_000) };
      const mine = <C extends { leg: { orderId: string } }>(changes: C[]) => changes.filter((c) => c.leg.orderId === order.id);
      const claimed = mine(await s.uow.run((tx) => tx.payments.claimUnsettled(before, later, 1000)));
      expect(claimed.map((c) => [c.leg.id, c.leg.updatedAt])).toEqual([[change.leg.id, later]]);
      expect(mine(await s.uow.run((tx) => tx.payments.claimUnsettled(before, later, 1000)))).toEqual([]);
    });
  });

  describe('PaymentRouteRepository', () => {
    test('a merchant\'s routes per mode, in their order; replaced whole; an empty list returns to the default', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const routes = [
        { processor: 'scripted_alternative', processorAccountId: 'acct_1' },
        { processor: 'scripted_primary', processorAccountId: null },
      ];
      expect(await s.reads.paymentRoutes.list(merchant.id, false)).toEqual([]);
      await s.uow.run((tx) => tx.paymentRoutes.replace(merchant.id, false, routes));
      expect(await s.reads.paymentRoutes.list(merchant.id, false)).toEqual(routes);
      expect(await s.reads.paymentRoutes.list(merchant.id, true)).toEqual([]);
      await s.uow.run((tx) => tx.paymentRoutes.replace(merchant.id, false, [routes[1]!]));
      expect(await s.reads.paymentRoutes.list(merchant.id, false)).toEqual([routes[1]]);
      await s.uow.run((tx) => tx.paymentRoutes.replace(merchant.id, false, []));
      expect(await s.reads.paymentRoutes.list(merchant.id, false)).toEqual([]);
    });

    test('refuses routes of a merchant that does not exist, and a processor name that is not one, storing nothing', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      await expect(s.uow.run((tx) => tx.paymentRoutes.replace('mer_none', false, [{ processor: 'scripted_primary', processorAccountId: null }]))).rejects.toThrow();
      await expect(s.uow.run((tx) => tx.paymentRoutes.replace(merchant.id, false, [{ processor: 'Not A Name', processorAccountId: null }]))).rejects.toThrow();
      expect(await s.reads.paymentRoutes.list(merchant.id, false)).toEqual([]);
    });
  });
}
