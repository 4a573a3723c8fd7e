// The refund rules, on the in-memory fakes (test/support/fakes): what test/refunds.test.ts proves through
// Postgres and the REST API, here in milliseconds. The seams (SQL, the order's constraint under
// concurrent refunds, the REST shape) stay with the Postgres suite.
import { create } from '@bufbuild/protobuf';
import { describe, expect, test } from 'vitest';
import { CreateRefundRequestSchema } from '../../src/gen/checkout/v1/refund_pb.ts';
import { ledgerTransactionId } from '../../src/modules/ledger/domain/ledger.ts';
import { STALE_REFUND_MS } from '../../src/modules/refund/application/refund-order.ts';
import { aDispute, givenMerchant, givenOrder, givenPaidOrder } from '../support/builders.ts';
import { memoryCore, refundContext } from '../support/memory-core.ts';

async function paidOrder(options: Parameters<typeof givenPaidOrder>[2] = {}) {
  const core = memoryCore();
  const { merchant, caller, key } = await givenMerchant(core.world);
  const { order, payment } = await givenPaidOrder(core.world, merchant, options);
  const refund = (amount: bigint | undefined, reason = 'requested_by_customer', note = '') =>
    core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, order.id, { amount, reason, note })).then((r) => core.refundOrder.settle(r.id));
  return { core, merchant, caller, key, order, payment, refund };
}

describe('refunding an order', () => {
  test('in full: the refund succeeds at the acquirer, the order is refunded, with order.refunded and the ledger', async () => {
    const { core, order, payment, refund } = await paidOrder();
    const result = await refund(undefined, 'requested_by_customer', 'broken teapot');
    expect(result.refund).toMatchObject({ amount: 2500n, status: 'succeeded', note: 'broken teapot', processorRef: expect.stringMatching(/^scripted_primary_refund_/) });
    expect(result.order).toMatchObject({ status: 'refunded', amountRefunded: 2500n });
    expect(core.primary.callsOf('refund').map((c) => c.args)).toEqual([[payment.payment.capture!.processorRef, 2500n, result.refund.id]]);
    const event = core.world.events().at(-1)!;
    expect(event).toMatchObject({ type: 'order.refunded', orderId: order.id, sequence: 3, data: { amount_refunded: 2500, refund: { id: result.refund.id, amount: 2500, note: 'broken teapot' } } });
    const posting = core.world.tables.ledger.get(ledgerTransactionId('refund', result.refund.id));
    expect(posting?.entries.map((e) => [e.account, e.amount])).toEqual([
      ['merchant_pending', 2500n],
      ['acquirer_clearing', -2500n],
    ]);
    expect(await core.world.reads.refunds.pendingAmount(order.id)).toBe(0n);
  });

  test('in parts, then the rest, then no more: each part is bounded by what remains', async () => {
    const { order, refund } = await paidOrder();
    expect((await refund(1000n)).order).toMatchObject({ status: 'partially_refunded', amountRefunded: 1000n });
    expect((await refund(500n)).order).toMatchObject({ status: 'partially_refunded', amountRefunded: 1500n });
    await expect(refund(1001n)).rejects.toMatchObject({ code: 'refund.exceeds_remaining', message: expect.stringContaining('Only 1000') });
    expect((await refund(undefined)).refund.amount).toBe(1000n);
    await expect(refund(1n)).rejects.toMatchObject({ code: 'refund.exceeds_remaining' });
    await expect(refund(undefined)).rejects.toMatchObject({ code: 'refund.exceeds_remaining' });
    expect(order.amount).toBe(2500n);
  });

  test('never over-refunds: what pending refunds hold counts as spent', async () => {
    const { core, caller, order } = await paidOrder();
    core.primary.always('refund', 'unreachable');
    const pending = await core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, order.id, { amount: 2000n, reason: 'duplicate', note: '' }));
    expect((await core.refundOrder.settle(pending.id)).refund.status).toBe('pending');
    await expect(core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, order.id, { amount: 501n, reason: 'duplicate', note: '' }))).rejects.toMatchObject({
      code: 'refund.exceeds_remaining',
      message: expect.stringContaining('2000 in refunds still pending'),
    });
  });

  test('refuses amounts that are not positive, unknown reasons, and notes that are too long', async () => {
    const { core, refund } = await paidOrder();
    await expect(refund(0n)).rejects.toMatchObject({ code: 'refund.amount_invalid', param: 'amount' });
    await expect(refund(-5n)).rejects.toMatchObject({ code: 'refund.amount_invalid' });
    await expect(refund(100n, 'changed_my_mind')).rejects.toMatchObject({ code: 'refund.reason_invalid', param: 'reason' });
    await expect(refund(100n, 'other', 'x'.repeat(501))).rejects.toMatchObject({ code: 'refund.note_invalid', param: 'note' });
    expect(core.primary.callsOf('refund')).toEqual([]);
    expect(core.world.tables.refunds.size).toBe(0);
  });

  test('only a paid order of the caller can be refunded', async () => {
    const { core, merchant, caller } = await paidOrder();
    const unpaid = await givenOrder(core.world, merchant);
    await expect(core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, unpaid.id, { amount: undefined, reason: 'other', note: '' }))).rejects.toMatchObject({ code: 'refund.order_not_refundable' });
    const { merchant: other } = await givenMerchant(core.world);
    const theirs = await givenPaidOrder(core.world, other);
    await expect(core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, theirs.order.id, { amount: undefined, reason: 'other', note: '' }))).rejects.toMatchObject({ code: 'order.not_found' });
    await expect(core.world.uow.run((tx) => core.refundOrder.reserve(tx, { ...caller, livemode: true }, theirs.order.id, { amount: undefined, reason: 'other', note: '' }))).rejects.toMatchObject({ code: 'order.not_found' });
  });

  test('a refund the acquirer declines fails, releases its amount, and changes neither the order nor the ledger', async () => {
    const { core, order, refund } = await paidOrder();
    core.primary.next('refund', { decline: 'do_not_honor' });
    const declined = await refund(1000n);
    expect(declined.refund).toMatchObject({ status: 'failed', failureCode: 'do_not_honor' });
    expect(declined.order).toMatchObject({ status: 'paid', amountRefunded: 0n, version: order.version });
    expect(core.world.ledger().filter((t) => t.kind === 'refund')).toEqual([]);
    expect((await refund(undefined)).refund).toMatchObject({ status: 'succeeded', amount: 2500n });
  });

  test('an acquirer that does not answer leaves the refund pending; the sweeper settles it once stale, and only once', async () => {
    const { core, order, refund } = await paidOrder();
    core.primary.next('refund', 'unreachable');
    const first = await refund(700n);
    expect(first.refund.status).toBe('pending');
    expect(core.backgroundErrors).toHaveLength(1);
    expect(await core.refundOrder.settleStale(10)).toBe(0);
    core.world.clock.advance(STALE_REFUND_MS + 1);
    expect(await core.refundOrder.settleStale(10)).toBe(1);
    expect(await core.refundOrder.settleStale(10)).toBe(0);
    expect(await core.world.reads.refunds.findById(first.refund.id)).toMatchObject({ status: 'succeeded' });
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ amountRefunded: 700n, status: 'partially_refunded' });
    // The acquirer was asked twice under the same refund id, which makes the second ask a no-op there.
    expect(core.primary.callsOf('refund').map((c) => c.args[2])).toEqual([first.refund.id, first.refund.id]);
  });

  test('what a dispute holds cannot be refunded too', async () => {
    const { core, order, payment, refund } = await paidOrder();
    await core.world.uow.run((tx) => tx.disputes.open(aDispute(order, payment.payment.id, { amount: 2000n })));
    await expect(refund(501n)).rejects.toMatchObject({ code: 'refund.exceeds_remaining', message: expect.stringContaining('2000 held by disputes') });
    expect((await refund(undefined)).refund.amount).toBe(500n);
  });

  test('a bank transfer has no acquirer: its refund succeeds at once', async () => {
    const { core, refund } = await paidOrder({ method: 'bank_transfer', route: 'virtual_iban' });
    const result = await refund(undefined);
    expect(result.refund).toMatchObject({ status: 'succeeded', processorRef: `bank_${result.refund.id}` });
    expect(core.primary.calls).toEqual([]);
  });
});

describe('a refund with an Idempotency-Key (RefundService)', () => {
  const request = (orderId: string, amount: bigint) => create(CreateRefundRequestSchema, { orderId, amount, reason: 'requested_by_customer', note: '' });

  test('the same request again answers the first refund, asks the acquirer once, and refunds once', async () => {
    const { core, key, order } = await paidOrder();
    const first = await core.refundService.createRefund(request(order.id, 600n), refundContext(key.secret, 'refund-key-1'));
    const replayContext = refundContext(key.secret, 'refund-key-1');
    const again = await core.refundService.createRefund(request(order.id, 600n), replayContext);
    expect(again.refund?.id).toBe(first.refund?.id);
    expect(replayContext.responseHeader.get('idempotent-replayed')).toBe('true');
    expect(core.primary.callsOf('refund')).toHaveLength(1);
    expect(await core.world.reads.refunds.listForOrder(order.id)).toHaveLength(1);
    expect(again.order?.amountRefunded).toBe(600n);
  });

  test('the key with another request is refused, and a request that failed frees its key', async () => {
    const { core, key, order } = await paidOrder();
    await core.refundService.createRefund(request(order.id, 600n), refundContext(key.secret, 'refund-key-2'));
    await expect(core.refundService.createRefund(request(order.id, 700n), refundContext(key.secret, 'refund-key-2'))).rejects.toMatchObject({ code: 'idempotency.key_reused' });
    await expect(core.refundService.createRefund(request(order.id, 9999n), refundContext(key.secret, 'refund-key-3'))).rejects.toMatchObject({ code: 'refund.exceeds_remaining' });
    const corrected = await core.refundService.createRefund(request(order.id, 100n), refundContext(key.secret, 'refund-key-3'));
    expect(corrected.refund?.amount).toBe(100n);
  });
});
