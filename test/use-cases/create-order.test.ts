// The rules of creating an order, on the in-memory fakes: validation, the order and its event written
// together, and the Idempotency-Key (what test/orders-api.test.ts and test/idempotency-keys.test.ts
// prove through Postgres and REST; the key's race between processes stays there).
import { describe, expect, test } from 'vitest';
import { givenMerchant, anOrderCommand } from '../support/builders.ts';
import { memoryCore } from '../support/memory-core.ts';

async function setting() {
  const core = memoryCore();
  const { caller } = await givenMerchant(core.world);
  return { core, caller };
}

describe('creating an order', () => {
  test('stores the order, pending, with order.created, both at once', async () => {
    const { core, caller } = await setting();
    const { order, replayed, clientSecret } = await core.createOrder(caller, anOrderCommand(), undefined);
    expect(replayed).toBe(false);
    expect(clientSecret).toEqual(expect.any(String));
    expect(order).toMatchObject({ status: 'pending', amount: 2500n, currency: 'EUR', merchantId: caller.merchantId, livemode: false, version: 1, checkoutUrl: expect.stringMatching(/^https:\/\/pay\.example\/c\//) });
    expect(await core.world.reads.orders.findForCheckout(order.id)).toMatchObject({ id: order.id, status: 'pending' });
    expect(core.world.events().map((e) => [e.type, e.orderId, e.sequence])).toEqual([['order.created', order.id, 1]]);
  });

  test('refuses what does not validate, and stores nothing of it', async () => {
    const { core, caller } = await setting();
    const refused = async (overrides: Parameters<typeof anOrderCommand>[0]) =>
      core.createOrder(caller, anOrderCommand(overrides), undefined).then(
        () => 'accepted',
        (err: { code: string; param?: string }) => `${err.code} ${err.param}`,
      );
    expect(await refused({ currency: 'EURO' })).toBe('money.currency_invalid currency');
    expect(await refused({ currency: '' })).toBe('request.parameter_missing currency');
    expect(await refused({ amount: 0n, lineItems: [] })).toMatch(/amount_invalid amount$/);
    expect(await refused({ amount: 2600n })).toMatch(/ line_items$/);
    expect(await refused({ reference: '' })).toBe('request.parameter_missing reference');
    expect(await refused({ returnUrl: 'ftp://shop.example/' })).toBe('order.return_url_invalid return_url');
    expect(await refused({ expiresAt: new Date(core.world.clock.now().getTime() + 60_000) })).toBe('order.expires_at_invalid expires_at');
    expect(core.world.tables.orders.size).toBe(0);
    expect(core.world.events()).toEqual([]);
  });

  test('with an Idempotency-Key: the same request is replayed, another one with the key refused, a bad key refused', async () => {
    const { core, caller } = await setting();
    const first = await core.createOrder(caller, anOrderCommand(), 'order-key-1');
    const again = await core.createOrder(caller, anOrderCommand(), 'order-key-1');
    expect(again).toEqual({ order: { ...first.order, clientSecretExpiresAt: first.order.clientSecretExpiresAt ?? null, customerId: null, paymentLinkId: null, subscriptionId: null, subscriptionCycle: null }, replayed: true });
    await expect(core.createOrder(caller, anOrderCommand({ amount: 2400n, lineItems: [{ name: 'Tea', amount: 2400n }] }), 'order-key-1')).rejects.toMatchObject({ code: 'idempotency.key_reused' });
    await expect(core.createOrder(caller, anOrderCommand(), 'bad key with spaces')).rejects.toMatchObject({ code: 'idempotency.key_invalid' });
    await expect(core.createOrder(caller, anOrderCommand(), 'subscription_cycle:1')).rejects.toMatchObject({ code: 'idempotency.key_invalid' });
    expect(core.world.tables.orders.size).toBe(1);
    // Keys are per mode: the same key in live mode makes a live order.
    expect((await core.createOrder({ ...caller, livemode: true }, anOrderCommand(), 'order-key-1')).replayed).toBe(false);
  });
});
