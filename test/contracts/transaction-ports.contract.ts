// The contracts of the ports a transaction writes beside its change: RequestLedger (idempotency keys),
// EventOutbox (with the relay's OutboxReader), LedgerJournal, and the UnitOfWork that binds them
// (commit, rollback, afterCommit, runAlone). Every adapter passes them: Postgres and the in-memory
// fakes (test/storage-ports.contract.test.ts).
import { describe, expect, test } from 'vitest';
import { markPaid } from '../../src/modules/order/domain/order-transitions.ts';
import { ledgerTransaction, type LedgerTransaction } from '../../src/modules/ledger/domain/ledger.ts';
import type { KeyedRequest } from '../../src/kernel/ports/request-ledger.port.ts';
import { ConflictError } from '../../src/kernel/ports/errors.ts';
import { aCapturePosting, anOrderEvent, aRefund, givenMerchant, givenOrder, givenPaidOrder, unique } from '../support/builders.ts';
import type { StoreUnderTest } from './stores.ts';

class Boom extends Error {}

/** Runs the RequestLedger contract against the store `store()` answers. */
export function requestLedgerContract(store: () => StoreUnderTest): void {
  describe('RequestLedger', () => {
    async function keyed(overrides: Partial<KeyedRequest> = {}): Promise<{ s: StoreUnderTest; request: KeyedRequest }> {
      const s = store();
      const { caller } = await givenMerchant(s);
      return { s, request: { scope: { merchantId: caller.merchantId, livemode: false }, key: unique('key-'), operation: 'refunds.create', fingerprint: 'fp-1', ...overrides } };
    }

    test('claims a new key; once completed, the same request replays the response as JSON', async () => {
      const { s, request } = await keyed();
      const response = { refund: { id: 're_1', amount: '500' }, list: [1, 2], none: null };
      await s.uow.run(async (tx) => {
        expect(await tx.requests.claim(request)).toEqual({ kind: 'claimed' });
        await tx.requests.complete(request, 're_1', response);
      });
      expect(await s.uow.run((tx) => tx.requests.claim(request))).toEqual({ kind: 'replay', response });
    });

    test('the key used for another request or another operation is a mismatch naming the first operation', async () => {
      const { s, request } = await keyed();
      await s.uow.run(async (tx) => {
        await tx.requests.claim(request);
        await tx.requests.complete(request, 're_1', { ok: true });
      });
      expect(await s.uow.run((tx) => tx.requests.claim({ ...request, fingerprint: 'fp-2' }))).toEqual({ kind: 'mismatch', operation: 'refunds.create' });
      expect(await s.uow.run((tx) => tx.requests.claim({ ...request, operation: 'orders.void' }))).toEqual({ kind: 'mismatch', operation: 'refunds.create' });
    });

    test('a transaction that fails takes its claim with it: the key is free for a corrected request', async () => {
      const { s, request } = await keyed();
      await expect(
        s.uow.run(async (tx) => {
          await tx.requests.claim(request);
          throw new Boom('the work failed');
        }),
      ).rejects.toBeInstanceOf(Boom);
      const corrected = { ...request, fingerprint: 'fp-corrected' };
      expect(await s.uow.run((tx) => tx.requests.claim(corrected))).toEqual({ kind: 'claimed' });
    });

    test('keys are per merchant and mode', async () => {
      const { s, request } = await keyed();
      await s.uow.run(async (tx) => {
        await tx.requests.claim(request);
        await tx.requests.complete(request, 'x', { n: 1 });
      });
      expect(await s.uow.run((tx) => tx.requests.claim({ ...request, scope: { ...request.scope, livemode: true }, fingerprint: 'other' }))).toEqual({ kind: 'claimed' });
      const { caller: other } = await givenMerchant(s);
      expect(await s.uow.run((tx) => tx.requests.claim({ ...request, scope: { merchantId: other.merchantId, livemode: false }, fingerprint: 'other' }))).toEqual({ kind: 'claimed' });
    });
  });
}

/** Runs the EventOutbox and OutboxReader contract against the store `store()` answers. */
export function eventOutboxContract(store: () => StoreUnderTest): void {
  describe('EventOutbox', () => {
    /** Publishes whatever earlier cases left, so that a case sees its own events only. */
    async function drained(s: StoreUnderTest): Promise<void> {
      for (let more = true; more; ) more = await s.outboxReader.withUnpublished(500, async (batch) => (await batch.markPublished(), batch.events.length > 0));
    }

    test('an event appended in a transaction reaches the relay once it commits, never when it rolls back', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      await drained(s);
      const kept = anOrderEvent(order, { type: 'order.paid', sequence: 2 });
      const dropped = anOrderEvent(order, { type: 'order.failed', sequence: 3 });
      await s.uow.run((tx) => tx.outbox.append(kept));
      await expect(
        s.uow.run(async (tx) => {
          await tx.outbox.append(dropped);
          throw new Boom();
        }),
      ).rejects.toBeInstanceOf(Boom);
      const seen = await s.outboxReader.withUnpublished(100, async (batch) => batch.events);
      expect(seen).toEqual([kept]);
    });

    test('the relay gets the oldest first, up to its limit; marked published, they do not come again; a failed pass leaves them', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      await drained(s);
      const at = (s2: number) => new Date(order.createdAt.getTime() + s2 * 1000);
      const events = [3, 1, 2].map((sec) => anOrderEvent(order, { type: 'order.paid', sequence: 10 + sec, createdAt: at(sec) }));
      await s.uow.run(async (tx) => {
        for (const e of events) await tx.outbox.append(e);
      });
      await expect(s.outboxReader.withUnpublished(2, async () => Promise.reject(new Boom()))).rejects.toBeInstanceOf(Boom);
      const first = await s.outboxReader.withUnpublished(2, async (batch) => (await batch.markPublished(), batch.events.map((e) => e.sequence)));
      expect(first).toEqual([11, 12]);
      const rest = await s.outboxReader.withUnpublished(2, async (batch) => (await batch.markPublished(), batch.events.map((e) => e.sequence)));
      expect(rest).toEqual([13]);
      expect(await s.outboxReader.withUnpublished(2, async (batch) => batch.events)).toEqual([]);
    });

    test('a second event with a subject\'s sequence is a conflict (the subject changed meanwhile)', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      await expect(s.uow.run((tx) => tx.outbox.append(anOrderEvent(order, { type: 'order.paid', sequence: 1 })))).rejects.toBeInstanceOf(ConflictError);
    });
  });
}

/** Runs the LedgerJournal contract against the store `store()` answers. */
export function ledgerJournalContract(store: () => StoreUnderTest): void {
  describe('LedgerJournal', () => {
    test('posts a transaction once: found with its entries in order; a repeat of its id posts nothing', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { order, payment } = await givenPaidOrder(s, merchant);
      const posted = (await s.reads.ledger.find(`ltx_capture_${payment.payment.id}`))!;
      expect(posted).toEqual({ ...aCapturePosting(order, payment.payment.id), createdAt: posted.createdAt, payoutId: null, disputeId: null });
      const other = unique('pay_');
      const transaction = aCapturePosting(order, other);
      expect(await s.uow.run((tx) => tx.ledger.post(transaction))).toBe(true);
      const halved: LedgerTransaction = { ...transaction, entries: transaction.entries.map((e) => ({ ...e, amount: e.amount / 2n })) };
      expect(await s.uow.run((tx) => tx.ledger.post(halved))).toBe(false);
      expect((await s.reads.ledger.find(transaction.id))!.entries).toEqual(transaction.entries);
      expect(await s.reads.ledger.find('ltx_capture_nothing')).toBeUndefined();
    });

    test('a transaction that does not balance is refused (by the commit at the latest), and nothing of it stays', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { order } = await givenPaidOrder(s, merchant);
      const good = aCapturePosting(order, unique('pay_'));
      const unbalanced: LedgerTransaction = { ...good, entries: [...good.entries.slice(0, -1), { ...good.entries.at(-1)!, amount: good.entries.at(-1)!.amount + 1n }] };
      await expect(s.uow.run((tx) => tx.ledger.post(unbalanced))).rejects.toThrow(/balance/);
      expect(await s.reads.ledger.find(unbalanced.id)).toBeUndefined();
      expect(() => ledgerTransaction({ ...good }, unbalanced.entries)).toThrow(/balance/);
    });
  });
}

/** Runs the UnitOfWork contract against the store `store()` answers. */
export function unitOfWorkContract(store: () => StoreUnderTest): void {
  describe('UnitOfWork', () => {
    const paidAgain = (order: Parameters<typeof markPaid>[0]) => markPaid(order, { method: 'card', settlement: { amount: 2400n, currency: 'EUR' } }, { eventId: unique('evt_'), now: order.createdAt });

    test('commits every write of run() together, and answers what the work answered', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      const t = paidAgain(order);
      const answer = await s.uow.run(async (tx) => {
        await tx.orders.saveTransition(t.order);
        await tx.outbox.append(t.event);
        return 'done';
      });
      expect(answer).toBe('done');
      expect((await s.reads.orders.findForCheckout(order.id))?.status).toBe('paid');
    });

    test('a throw rolls back every write of run() and comes out as it was thrown', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { order, payment } = await givenPaidOrder(s, merchant);
      const refund = aRefund(order, payment.payment.id);
      const boom = new Boom('after the writes');
      const failed = s.uow.run(async (tx) => {
        await tx.refunds.reserve(refund);
        await tx.ledger.post(aCapturePosting(order, 'pay_rolled_back'));
        throw boom;
      });
      await expect(failed).rejects.toBe(boom);
      expect(await s.reads.refunds.findById(refund.id)).toBeUndefined();
      expect(await s.reads.refunds.pendingAmount(order.id)).toBe(0n);
      expect(await s.reads.ledger.find('ltx_capture_pay_rolled_back')).toBeUndefined();
    });

    test('what run() writes is seen outside only once it commits', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      let seenInside: string | undefined;
      let seenOutside: string | undefined;
      await s.uow.run(async (tx) => {
        await tx.orders.saveTransition(paidAgain(order).order);
        seenInside = (await tx.orders.findForCheckout(order.id))?.status;
        seenOutside = (await s.reads.orders.findForCheckout(order.id))?.status;
      });
      expect([seenInside, seenOutside]).toEqual(['paid', 'pending']);
    });

    test('after-commit tasks run once the commit is visible, and never after a rollback', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const order = await givenOrder(s, merchant);
      const seen: string[] = [];
      await s.uow.run(async (tx, afterCommit) => {
        afterCommit(async () => void seen.push(`task saw ${(await s.reads.orders.findForCheckout(order.id))?.status}`));
        await tx.orders.saveTransition(paidAgain(order).order);
        seen.push('work done');
      });
      expect(seen).toEqual(['work done', 'task saw paid']);
      const other = await givenOrder(s, merchant);
      await expect(
        s.uow.run(async (tx, afterCommit) => {
          afterCommit(async () => void seen.push('ran after a rollback'));
          await tx.orders.saveTransition(paidAgain(other).order);
          throw new Boom();
        }),
      ).rejects.toBeInstanceOf(Boom);
      expect(seen).toEqual(['work done', 'task saw paid']);
    });

    test('runAlone: each call stands on its own, so a failing second call leaves the first', async () => {
      const s = store();
      const { merchant } = await givenMerchant(s);
      const { order, payment } = await givenPaidOrder(s, merchant);
      const first = aRefund(order, payment.payment.id, { amount: 100n });
      await expect(
        s.uow.runAlone(async (tx) => {
          await tx.refunds.reserve(first);
          await tx.refunds.reserve(aRefund(order, payment.payment.id, { amount: 10_000n }));
        }),
      ).rejects.toThrow();
      expect(await s.reads.refunds.findById(first.id)).toMatchObject({ id: first.id, status: 'pending' });
    });
  });
}
