// The void rules, on the in-memory fakes: what the void cases of test/refunds.test.ts and
// test/manual-capture.test.ts prove through Postgres and REST, here in milliseconds.
import { describe, expect, test } from 'vitest';
import { ledgerTransactionId } from '../../src/modules/ledger/domain/ledger.ts';
import type { Scope } from '../../src/kernel/domain/caller.ts';
import { aDispute, givenAuthorizedOrder, givenMerchant, givenOrder, givenPaidOrder } from '../support/builders.ts';
import { memoryCore, type MemoryCore } from '../support/memory-core.ts';

/** Holds the void in its own transaction, then does what it left for after the commit, as OrderService does. */
async function voidOrder(core: MemoryCore, scope: Scope, orderId: string) {
  const held = await core.world.uow.run((tx) => core.voidOrder.hold(tx, scope, orderId));
  if (held.reversal) await core.voidOrder.reverse(held.reversal);
  await core.voidOrder.release(held.releases);
  return held;
}

async function setting() {
  const core = memoryCore();
  const { merchant, caller } = await givenMerchant(core.world);
  return { core, merchant, caller };
}

describe('voiding an order', () => {
  test('an authorized order is voided at once, and its authorization released at the acquirer', async () => {
    const { core, merchant, caller } = await setting();
    const { order, payment } = await givenAuthorizedOrder(core.world, merchant);
    const held = await voidOrder(core, caller, order.id);
    expect(held.order).toMatchObject({ status: 'voided' });
    expect(core.world.events().at(-1)).toMatchObject({ type: 'order.voided', orderId: order.id });
    expect(core.primary.callsOf('void').map((c) => c.args[0])).toEqual([payment.attempts[0]!.processorRef]);
    // Nothing was captured: nothing in the ledger.
    expect(core.world.ledger()).toEqual([]);
  });

  test('a paid card order before settlement: the capture is reversed at the acquirer, and undone in the ledger', async () => {
    const { core, merchant, caller } = await setting();
    const { order, payment } = await givenPaidOrder(core.world, merchant);
    const held = await voidOrder(core, caller, order.id);
    expect(held.reversal?.leg.status).toBe('reversal_pending');
    expect(core.primary.callsOf('reverse').map((c) => c.args.slice(0, 2))).toEqual([[payment.payment.capture!.processorRef, 2500n]]);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'voided' });
    const capture = core.world.tables.ledger.get(ledgerTransactionId('capture', payment.payment.id))!;
    const undone = core.world.tables.ledger.get(ledgerTransactionId('void', payment.payment.id))!;
    expect(undone.entries.map((e) => [e.account, e.amount])).toEqual(capture.entries.map((e) => [e.account, -e.amount]));
  });

  test('a reversal the acquirer does not answer stays held, and the order paid, until it is retried', async () => {
    const { core, merchant, caller } = await setting();
    const { order } = await givenPaidOrder(core.world, merchant);
    core.primary.next('reverse', 'unreachable');
    const held = await voidOrder(core, caller, order.id);
    expect(core.backgroundErrors).toHaveLength(1);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'paid' });
    // A second void finds the reversal under way and answers the order as it stands.
    expect((await voidOrder(core, caller, order.id)).reversal).toBeUndefined();
    await core.voidOrder.reverse(held.reversal!);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'voided' });
  });

  test('a voided order is answered as it is, with no second event', async () => {
    const { core, merchant, caller } = await setting();
    const { order } = await givenAuthorizedOrder(core.world, merchant);
    await voidOrder(core, caller, order.id);
    const events = core.world.events().length;
    expect((await voidOrder(core, caller, order.id)).order).toMatchObject({ status: 'voided' });
    expect(core.world.events()).toHaveLength(events);
    expect(core.primary.callsOf('void')).toHaveLength(1);
  });

  test('refuses an order with refunds, a disputed one, a pending one, and one whose capture is under way', async () => {
    const { core, merchant, caller } = await setting();
    const refunded = await givenPaidOrder(core.world, merchant);
    await core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, refunded.order.id, { amount: 100n, reason: 'other', note: '' }));
    await expect(voidOrder(core, caller, refunded.order.id)).rejects.toMatchObject({ code: 'void.order_not_voidable', message: expect.stringContaining('refund the rest') });

    const disputed = await givenPaidOrder(core.world, merchant);
    await core.world.uow.run((tx) => tx.disputes.open(aDispute(disputed.order, disputed.payment.payment.id)));
    await expect(voidOrder(core, caller, disputed.order.id)).rejects.toMatchObject({ code: 'void.order_not_voidable', message: expect.stringContaining('disputed') });

    const pending = await givenOrder(core.world, merchant);
    await expect(voidOrder(core, caller, pending.id)).rejects.toMatchObject({ code: 'void.order_not_voidable' });

    const capturing = await givenAuthorizedOrder(core.world, merchant);
    await core.world.uow.run((tx) => core.captureOrder.request(tx, caller, capturing.order.id, undefined));
    await expect(voidOrder(core, caller, capturing.order.id)).rejects.toMatchObject({ code: 'void.order_not_voidable', message: expect.stringContaining('capture') });

    await expect(voidOrder(core, { ...caller, livemode: true }, pending.id)).rejects.toMatchObject({ code: 'order.not_found' });
    expect(core.primary.callsOf('reverse')).toEqual([]);
    expect(core.primary.callsOf('void')).toEqual([]);
  });

  test('a paid order cannot be refunded while its void is under way', async () => {
    const { core, merchant, caller } = await setting();
    const { order } = await givenPaidOrder(core.world, merchant);
    core.primary.next('reverse', 'unreachable');
    await voidOrder(core, caller, order.id);
    await expect(core.world.uow.run((tx) => core.refundOrder.reserve(tx, caller, order.id, { amount: undefined, reason: 'other', note: '' }))).rejects.toMatchObject({
      code: 'refund.order_not_refundable',
      message: expect.stringContaining('being voided'),
    });
  });

  test('a transfer has no acquirer: its order is voided at once', async () => {
    const { core, merchant, caller } = await setting();
    const { order } = await givenPaidOrder(core.world, merchant, { method: 'bank_transfer', route: 'virtual_iban' });
    const held = await voidOrder(core, caller, order.id);
    expect(held.order).toMatchObject({ status: 'voided' });
    expect(core.primary.calls).toEqual([]);
  });
});
