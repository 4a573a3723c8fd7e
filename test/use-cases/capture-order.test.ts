// The capture rules of manual-capture orders, on the in-memory fakes: what test/manual-capture.test.ts
// proves through Postgres and REST, here in milliseconds (the REST shape and SQL stay there).
import { describe, expect, test } from 'vitest';
import { STALE_CAPTURE_MS } from '../../src/modules/capture/application/capture-order.ts';
import { AUTHORIZATION_VALIDITY_MS } from '../../src/modules/order/domain/capture.ts';
import { ledgerTransactionId } from '../../src/modules/ledger/domain/ledger.ts';
import { givenAuthorizedOrder, givenMerchant, givenPaidOrder } from '../support/builders.ts';
import { memoryCore } from '../support/memory-core.ts';

async function authorizedOrder() {
  const core = memoryCore();
  const { merchant, caller } = await givenMerchant(core.world);
  const { order, payment } = await givenAuthorizedOrder(core.world, merchant);
  const request = (amount?: bigint, orderId = order.id) => core.world.uow.run((tx) => core.captureOrder.request(tx, caller, orderId, amount));
  const capture = async (amount?: bigint) => {
    await request(amount);
    return core.captureOrder.complete(order.id);
  };
  return { core, merchant, caller, order, payment, request, capture };
}

describe('capturing an authorized order', () => {
  test('in full: the acquirer captures, the order is paid with order.paid, the capture is posted, the request ends', async () => {
    const { core, order, payment, capture } = await authorizedOrder();
    expect(await capture()).toBe(true);
    const leg = payment.attempts[0]!;
    expect(core.primary.callsOf('capture').map((c) => c.args.slice(0, 2))).toEqual([[leg.processorRef, 2500n]]);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'paid', amountCaptured: 2500n, authorizationExpiresAt: null });
    expect((await core.world.reads.payments.listForOrder(order.id))[0]!.payment).toMatchObject({ status: 'succeeded', capture: { amount: 2500n } });
    expect(core.world.events().at(-1)).toMatchObject({ type: 'order.paid', data: { amount_captured: 2500 } });
    expect(core.world.tables.ledger.has(ledgerTransactionId('capture', payment.payment.id))).toBe(true);
    expect(await core.world.reads.captures.find(order.id)).toBeUndefined();
  });

  test('in part: the order is paid for what was captured, and refunds are bounded by it', async () => {
    const { core, caller, order, capture } = await authorizedOrder();
    await capture(1800n);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'paid', amount: 2500n, amountCaptured: 1800n });
    const refund = (amount: bigint) => core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, order.id, { amount, reason: 'other', note: '' }));
    await expect(refund(1801n)).rejects.toMatchObject({ code: 'refund.exceeds_remaining', message: expect.stringContaining('Only 1800') });
    expect((await refund(1800n)).amount).toBe(1800n);
  });

  test('refuses more than was authorized, nothing, and anything not a positive amount', async () => {
    const { core, order, request } = await authorizedOrder();
    await expect(request(2501n)).rejects.toMatchObject({ code: 'capture.exceeds_authorized', param: 'amount' });
    await expect(request(0n)).rejects.toMatchObject({ code: expect.stringMatching(/amount_invalid/) });
    expect(await core.world.reads.captures.find(order.id)).toBeUndefined();
  });

  test('only an authorized order of the caller can be captured, one capture at a time', async () => {
    const { core, merchant, caller, request } = await authorizedOrder();
    await request(1000n);
    await expect(request(500n)).rejects.toMatchObject({ code: 'capture.order_not_capturable', message: expect.stringContaining('under way') });
    const paid = await givenPaidOrder(core.world, merchant);
    await expect(request(undefined, paid.order.id)).rejects.toMatchObject({ code: 'capture.order_not_capturable' });
    await expect(core.world.uow.run((tx) => core.captureOrder.request(tx, { ...caller, merchantId: 'mer_other' }, paid.order.id, undefined))).rejects.toMatchObject({ code: 'order.not_found' });
  });

  test('an authorization that ran out cannot be captured; the sweeper releases it as order.voided', async () => {
    const { core, order, payment, request } = await authorizedOrder();
    core.world.clock.advance(AUTHORIZATION_VALIDITY_MS + 1000);
    await expect(request()).rejects.toMatchObject({ code: 'capture.order_not_capturable', message: expect.stringContaining('ran out') });
    expect(await core.payments.releaseAuthorizations(10)).toBe(1);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'voided' });
    expect(core.world.events().at(-1)).toMatchObject({ type: 'order.voided' });
    expect(core.primary.callsOf('void').map((c) => c.args[0])).toEqual([payment.attempts[0]!.processorRef]);
    expect((await core.world.reads.payments.listForOrder(order.id))[0]!.attempts[0]).toMatchObject({ status: 'canceled', cancellationReason: 'authorization_expired' });
  });

  test('a capture the acquirer declines ends the request; the order stays authorized and can be captured again', async () => {
    const { core, order, capture } = await authorizedOrder();
    core.primary.next('capture', { decline: 'do_not_honor' });
    await expect(capture(1000n)).rejects.toMatchObject({ code: 'capture.declined' });
    expect(await core.world.reads.captures.find(order.id)).toBeUndefined();
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'authorized', amountCaptured: null });
    expect(await capture(1000n)).toBe(true);
  });

  test('an acquirer that does not answer leaves the request; the sweeper finishes it once stale', async () => {
    const { core, order, capture } = await authorizedOrder();
    core.primary.next('capture', 'unreachable');
    expect(await capture(2000n)).toBe(false);
    expect(await core.world.reads.captures.find(order.id)).toMatchObject({ amount: 2000n });
    expect(await core.captureOrder.completeStale(10)).toBe(0);
    core.world.clock.advance(STALE_CAPTURE_MS + 1);
    expect(await core.captureOrder.completeStale(10)).toBe(1);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'paid', amountCaptured: 2000n });
    expect(await core.captureOrder.completeStale(10)).toBe(0);
  });
});
