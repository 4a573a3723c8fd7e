// The expiry rules, on the in-memory fakes: closing an order on request and the sweeper's expiry, what
// test/expire-order.test.ts proves through Postgres and REST, here in milliseconds.
import { describe, expect, test } from 'vitest';
import { recordAuthorization, requireAuthentication } from '../../src/modules/payment/domain/payment.entity.ts';
import { STALE_PROCESSING_MS } from '../../src/modules/payment/domain/attempt-policy.ts';
import type { Order } from '../../src/modules/order/domain/order.entity.ts';
import { aCardPayment, givenMerchant, givenOrder, givenPaidOrder } from '../support/builders.ts';
import { memoryCore, type MemoryCore } from '../support/memory-core.ts';

async function setting() {
  const core = memoryCore();
  const { merchant, caller } = await givenMerchant(core.world);
  const expire = (orderId: string) => core.world.uow.run((tx, afterCommit) => core.expireOrder(tx, caller, orderId, afterCommit));
  return { core, merchant, caller, expire };
}

/** A card payment of `order` waiting for its 3-D Secure challenge, its authorization held at the primary route. */
async function challenged(core: MemoryCore, order: Order) {
  const now = core.world.clock.now();
  const started = aCardPayment(order, { now });
  const waiting = requireAuthentication(recordAuthorization(started, 'auth_challenged', now), 'auth_challenged', { url: 'https://issuer.example/3ds', method: 'GET', fields: {} }, '123456', now);
  await core.world.uow.run(async (tx) => {
    await tx.payments.start(started);
    await tx.payments.recordChallenge(waiting);
  });
  return waiting;
}

describe('expiring an order on request', () => {
  test('an open order expires with order.expired; asked again, it is answered as it is', async () => {
    const { core, merchant, expire } = await setting();
    const order = await givenOrder(core.world, merchant);
    expect(await expire(order.id)).toMatchObject({ status: 'expired', version: 2 });
    expect(core.world.events().at(-1)).toMatchObject({ type: 'order.expired', orderId: order.id, sequence: 2 });
    const events = core.world.events().length;
    expect(await expire(order.id)).toMatchObject({ status: 'expired', version: 2 });
    expect(core.world.events()).toHaveLength(events);
  });

  test('an open challenge is canceled, and its authorization released once the expiry commits', async () => {
    const { core, merchant, expire } = await setting();
    const order = await givenOrder(core.world, merchant);
    const waiting = await challenged(core, order);
    await expire(order.id);
    expect(await core.world.reads.payments.findByAttempt(order.id, waiting.leg.id)).toMatchObject({ leg: { status: 'canceled', cancellationReason: 'order_expired' } });
    expect(core.primary.callsOf('void').map((c) => c.args[0])).toEqual(['auth_challenged']);
  });

  test('refuses a paid order, and an order whose card payment is in flight until that payment is stale', async () => {
    const { core, merchant, caller, expire } = await setting();
    const paid = await givenPaidOrder(core.world, merchant);
    await expect(expire(paid.order.id)).rejects.toMatchObject({ code: 'expire.order_not_open', message: expect.stringContaining('void or refund') });
    const busy = await givenOrder(core.world, merchant);
    await core.world.uow.run((tx) => tx.payments.start(aCardPayment(busy, { now: core.world.clock.now() })));
    await expect(expire(busy.id)).rejects.toMatchObject({ code: 'checkout.payment_in_progress' });
    core.world.clock.advance(STALE_PROCESSING_MS);
    expect(await expire(busy.id)).toMatchObject({ status: 'expired' });
    await expect(core.world.uow.run((tx, afterCommit) => core.expireOrder(tx, { ...caller, livemode: true }, busy.id, afterCommit))).rejects.toMatchObject({ code: 'order.not_found' });
  });
});

describe('the expiry sweeper', () => {
  test('expires open orders past their time, leaves the others, and cancels their challenges', async () => {
    const { core, merchant } = await setting();
    const now = core.world.clock.now();
    const soon = await givenOrder(core.world, merchant, { command: { expiresAt: new Date(now.getTime() + 10 * 60_000) } });
    const later = await givenOrder(core.world, merchant, { command: { expiresAt: new Date(now.getTime() + 60 * 60_000) } });
    const waiting = await challenged(core, soon);
    expect(await core.payments.expireDue(100)).toBe(0);
    core.world.clock.advance(11 * 60_000);
    expect(await core.payments.expireDue(100)).toBe(1);
    expect(await core.world.reads.orders.findForCheckout(soon.id)).toMatchObject({ status: 'expired' });
    expect(await core.world.reads.orders.findForCheckout(later.id)).toMatchObject({ status: 'pending' });
    expect(await core.world.reads.payments.findByAttempt(soon.id, waiting.leg.id)).toMatchObject({ leg: { status: 'canceled' } });
    expect(core.primary.callsOf('void')).toHaveLength(1);
    expect(await core.payments.expireDue(100)).toBe(0);
  });

  test('leaves an order whose payment is in flight to that payment', async () => {
    const { core, merchant } = await setting();
    const order = await givenOrder(core.world, merchant, { command: { expiresAt: new Date(core.world.clock.now().getTime() + 10 * 60_000) } });
    core.world.clock.advance(10 * 60_000 - 1000);
    await core.world.uow.run((tx) => tx.payments.start(aCardPayment(order, { now: core.world.clock.now() })));
    core.world.clock.advance(2000);
    expect(await core.payments.expireDue(100)).toBe(0);
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ status: 'pending' });
  });
});
