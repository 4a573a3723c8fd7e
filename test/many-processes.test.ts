/**
 * Many processes against one database and one NATS, as on several machines: two `checkout serve`
 * processes with no workers (the API behind a load balancer), two `checkout worker` processes each
 * running the relay, the sweeper, the settler, the biller and the janitor, and two running the webhook
 * dispatcher, all real child processes configured by environment only. Orders come in through both
 * APIs (some twice, with one idempotency key, once through each), are paid, expire, settle and are
 * paid out; subscriptions are billed; and nothing is done twice: every event is in JetStream once,
 * reaches the receiver (twice only when a retry was needed), each order expires, settles and each
 * subscription cycle is charged once, one payout run per day makes one payout per merchant, and
 * `checkout ledger verify` passes. Both relays published and both dispatchers delivered.
 *
 * test/outbox-relay.test.ts proves two relays in one process split the outbox with SKIP LOCKED;
 * test/settlement.test.ts and test/subscriptions.test.ts race settlement runs and schedulers in
 * one process; this file runs every role twice in processes of their own.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect } from 'nats';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { readStream, startOwnNatsServer, uniqueStream, type OwnNatsServer } from './support/nats-server.ts';
import { createSandboxWithCli, runCheckout, socketOwner, spawnServe, spawnWorker, type CheckoutProcess } from './support/processes.ts';
import { api, createEndpoint, pool, Receiver, serviceEnv } from './support/webhooks.ts';
import { orderBody } from './support/order-fixtures.ts';
import { sleep, waitFor } from './support/wait.ts';
import { requires } from './support/requirements.ts';

let db: TestDatabase;
let nats: OwnNatsServer;
let receiver: Receiver;
const processes: CheckoutProcess[] = [];
const stream = uniqueStream();

beforeAll(async () => {
  db = await createTestDatabase();
  nats = await startOwnNatsServer(undefined, { monitor: true });
  receiver = await Receiver.start();
});

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await receiver?.close();
  await nats?.destroy();
  await db?.drop();
});

/** The first "HH:MM" (UTC) at least `afterMs` from now, and that instant. */
function cutoffAfter(afterMs: number): { hhmm: string; at: Date } {
  const at = new Date(Math.ceil((Date.now() + afterMs) / 60_000) * 60_000);
  return { hhmm: at.toISOString().slice(11, 16), at };
}

interface Connz {
  connections: { name?: string; in_msgs: number; out_msgs: number }[];
}

describe('two of every role, each in a process of its own, on one database and one NATS', requires('nats-server'), () => {
  test('orders through both APIs are created, paid, expired, settled, paid out and billed once each; every event is in JetStream once and delivered', async () => {
    const env = serviceEnv(db, stream, nats.url, {
      // Six processes with pools of their own: keep them small beside the other test files.
      DATABASE_POOL_MAX: '4',
      LOG_LEVEL: 'warn',
      // A receiver that always answers 200 at once: a second request for one event means a retry was needed.
      WEBHOOK_TIMEOUT_MS: '5000',
      WEBHOOK_LEASE_MS: '30000',
    });
    const apis = [await spawnServe({ ...env, SERVE_WORKERS: 'none' }), await spawnServe({ ...env, SERVE_WORKERS: 'none' })];
    processes.push(...apis);
    const [a, b] = apis as [(typeof apis)[0], (typeof apis)[0]];

    const shops: SandboxCredentials[] = [await createSandboxWithCli('Shop one', env), await createSandboxWithCli('Shop two', env)];
    // Settled as soon as captured, so that the settlers have work within the test.
    await db.knex('merchants').whereIn('id', shops.map((s) => s.merchant_id)).update({ settlement_delay_days: 0 });
    for (const [i, shop] of shops.entries()) await createEndpoint(apis[i]!.base, shop.test_secret_key, receiver.url(`/shop${i}`), ['*']);

    // The settlers tick every minute from their start: the first settles what is paid by then, and a payout run
    // after the cut-off (a minute boundary between 80 and 140 s from now) pays it out.
    const cutoff = cutoffAfter(80_000);
    const workerEnv = { ...env, PAYOUT_CUTOFF: cutoff.hhmm };
    const background = ['relay', 'sweeper', 'settler', 'biller', 'janitor'];
    const workers = await Promise.all([spawnWorker(background, workerEnv), spawnWorker(background, workerEnv)]);
    const dispatchers = await Promise.all([spawnWorker(['dispatcher'], workerEnv), spawnWorker(['dispatcher'], workerEnv)]);
    processes.push(...workers, ...dispatchers);
    const dispatcherPids = dispatchers.map((d) => d.pid);
    const sentBy = new Map<number, number>();
    receiver.behaviour = (request) => {
      const owner = sentBy.get(request.remotePort) ?? socketOwner(request.remotePort, receiver.port, dispatcherPids);
      if (owner !== undefined) sentBy.set(request.remotePort, owner);
      return { status: 200 };
    };

    // 160 orders, alternating between the APIs and the shops; every fourth is sent again with its
    // idempotency key to the other API.
    const N = 160;
    const orders = await pool(N, 8, async (i) => {
      const shop = shops[i % 2]!;
      const [first, second] = i % 4 < 2 ? [a, b] : [b, a];
      const body = orderBody({ reference: `MP-${i}`, amount: 1000 + i, line_items: [{ name: 'Tea', amount: 1000 + i }] });
      const key = `mp-key-${i}`;
      const res = await fetch(`${first.base}/v1/orders`, { method: 'POST', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
      const order = (await res.json()) as { id: string };
      expect(res.status, JSON.stringify(order)).toBe(201);
      if (i % 4 === 0) {
        const again = await fetch(`${second.base}/v1/orders`, { method: 'POST', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', 'idempotency-key': key }, body: JSON.stringify(body) });
        expect(again.status).toBeLessThan(300);
        expect(((await again.json()) as { id: string }).id).toBe(order.id);
      }
      return { id: order.id, shop, i };
    });
    // Two in three paid by transfer (through the other API than the one that created it); the rest left to expire.
    const paid = orders.filter((o) => o.i % 3 !== 2);
    const unpaid = orders.filter((o) => o.i % 3 === 2);
    await pool(paid.length, 8, async (n) => {
      const o = paid[n]!;
      const res = await api((o.i % 2 ? a : b).base, o.shop.test_secret_key, 'POST', `/v1/test_helpers/orders/${o.id}/simulate_transfer`);
      expect(res.status).toBe(200);
    });
    // As if their time had passed: the sweepers find them due.
    await db.knex('orders').whereIn('id', unpaid.map((o) => o.id)).update({ expires_at: new Date(Date.now() - 60_000) });

    // Subscriptions on the real clock: the first cycle is charged by the API on creation; the second is made due
    // at once, as if a month had passed, for the billers to charge.
    const subscriptions = await pool(6, 3, async (i) => {
      const shop = shops[i % 2]!;
      const base = (i % 2 ? a : b).base;
      const customer = await api<{ id: string }>(base, shop.test_secret_key, 'POST', '/v1/customers', { email: `sub${i}@example.com` });
      expect(customer.status).toBe(201);
      const number = shop.test_cards.find((c) => c.behaviour === 'approved')!.number;
      const card = await api<{ id: string }>(base, shop.test_secret_key, 'POST', `/v1/customers/${customer.json.id}/cards`, { card: { number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 4, cvc: '123', name: 'Ada' } });
      expect(card.status).toBe(201);
      const sub = await api<{ id: string; charged_cycles: unknown[] }>(base, shop.test_secret_key, 'POST', '/v1/subscriptions', { customer: customer.json.id, card: card.json.id, amount: 990 + i, currency: 'EUR', reference: `plan-${i}`, interval: 'month' });
      expect(sub.status, JSON.stringify(sub.json)).toBeLessThan(300);
      expect(sub.json.charged_cycles).toHaveLength(1);
      return { id: sub.json.id, shop };
    });
    await db.knex('subscriptions').whereIn('id', subscriptions.map((s) => s.id)).update({ next_charge_at: new Date(Date.now() - 60_000) });

    // Expired once each, by one sweeper or the other.
    await waitFor('every unpaid order expired', () => db.knex('orders').whereIn('id', unpaid.map((o) => o.id)).where({ status: 'expired' }).count<{ count: string }[]>('* as count'), (rows) => Number(rows[0]!.count) === unpaid.length, 60_000, 250);
    // The second cycle of every subscription charged once, by one biller or the other.
    await waitFor(
      'the second cycle of every subscription charged',
      () => Promise.all(subscriptions.map((s) => api<{ charged_cycles: { cycle: number }[] }>(a.base, s.shop.test_secret_key, 'GET', `/v1/subscriptions/${s.id}`))),
      (subs) => subs.every((s) => s.json.charged_cycles.length === 2),
      60_000,
      500,
    );
    // After the cut-off, the next settler tick pays out what the earlier one settled.
    await waitFor('a payout per shop', () => db.knex('payouts').whereIn('merchant_id', shops.map((s) => s.merchant_id)).select('merchant_id', 'livemode', 'amount', 'cutoff'), (rows) => rows.length >= 2, 240_000, 1000);
    // Nothing is left in the outbox, and every delivery has been made.
    const settle = async () => {
      await waitFor('the outbox drained', () => db.knex('events').whereNull('published_at').count<{ count: string }[]>('* as count'), (rows) => Number(rows[0]!.count) === 0, 60_000, 250);
      const ids = (await db.knex('events').pluck('id')) as string[];
      await waitFor('every event delivered', () => ids.filter((id) => !receiver.acceptedIds().has(id)), (left) => left.length === 0, 60_000, 250);
    };
    await settle();
    // Stop the workers (SIGTERM: each finishes the work in hand), then settle anything their last ticks made.
    await sleep(1000);
    await Promise.all(workers.map((w) => w.stop('SIGTERM')));
    await settle();
    await Promise.all(dispatchers.map((d) => d.stop('SIGTERM')));

    // ---- counts ----
    const events: { id: string; type: string; order_id: string | null }[] = await db.knex('events').select('id', 'type', 'order_id');
    const eventIds = events.map((e) => e.id);
    const byType = (type: string) => events.filter((e) => e.type === type);

    // One order.created per order however often it was sent, one order.paid per paid order, one order.expired per unpaid one.
    expect(byType('order.created').filter((e) => orders.some((o) => o.id === e.order_id))).toHaveLength(N);
    const once = (type: string, ids: string[]) => {
      const got = byType(type).map((e) => e.order_id!).filter((id) => ids.includes(id));
      expect(got.sort(), type).toEqual([...ids].sort());
    };
    once('order.paid', paid.map((o) => o.id));
    once('order.expired', unpaid.map((o) => o.id));

    // Each paid order settled once (each settlement is one ledger transaction named after the order).
    const settled = await db.knex('ledger_transactions').where({ kind: 'settle' }).whereIn('order_id', paid.map((o) => o.id)).select('order_id');
    expect(new Set(settled.map((r) => r.order_id)).size).toBe(settled.length);
    expect(settled.length).toBe(paid.length);

    // Every subscription cycle charged once: two cycles, two distinct orders, each paid once.
    for (const s of subscriptions) {
      const got = await api<{ charged_cycles: { cycle: number; order: string; charges: number }[] }>(b.base, s.shop.test_secret_key, 'GET', `/v1/subscriptions/${s.id}`);
      expect(got.json.charged_cycles.map((c) => c.cycle)).toEqual([1, 2]);
      expect(new Set(got.json.charged_cycles.map((c) => c.order)).size).toBe(2);
      const cycleOrders = got.json.charged_cycles.map((c) => c.order);
      expect(byType('order.paid').filter((e) => cycleOrders.includes(e.order_id!))).toHaveLength(2);
    }
    expect(byType('subscription.charged')).toHaveLength(subscriptions.length * 2);

    // One payout run per day however many settlers raced for it, and one payout per shop in test mode.
    const runs = await db.knex('payout_runs').select('day');
    expect(new Set(runs.map((r) => String(r.day))).size).toBe(runs.length);
    const payouts = await db.knex('payouts').whereIn('merchant_id', shops.map((s) => s.merchant_id)).select('merchant_id', 'livemode', 'cutoff');
    expect(payouts.map((p) => p.merchant_id).sort()).toEqual(shops.map((s) => s.merchant_id).sort());
    expect(new Date(payouts[0]!.cutoff).getTime()).toBe(cutoff.at.getTime());

    // Every event in JetStream exactly once, under its own id.
    const nc = await connect({ servers: nats.url });
    const { messages, msgIds } = await readStream(await nc.jetstreamManager(), stream.stream);
    await nc.close();
    expect(messages).toBe(events.length);
    expect(new Set(msgIds).size).toBe(msgIds.length);
    expect(new Set(msgIds)).toEqual(new Set(eventIds));

    // Every event delivered; one arriving twice only where the attempt log shows a retry was needed.
    const received = receiver.requests.filter((r) => eventIds.includes(r.body.id));
    expect(new Set(received.map((r) => r.body.id))).toEqual(new Set(eventIds));
    const repeated = [...new Set(received.filter((r) => r.nth > 0).map((r) => r.body.id))];
    for (const id of repeated) {
      const attempts = await db.knex('webhook_delivery_attempts').where({ event_id: id }).select('status_code', 'error');
      expect(attempts.some((x) => x.status_code === null || x.status_code >= 300), `${id} was sent ${receiver.of(id).length} times with no failed attempt`).toBe(true);
    }

    // Both relays published (their connections carried the events in), both dispatchers sent webhooks.
    const connz = (await (await fetch(`${nats.monitorUrl}/connz?limit=1024&state=any`)).json()) as Connz;
    const relayConnections = connz.connections.filter((c) => c.name === `checkout-${background.join('-')}`);
    expect(relayConnections).toHaveLength(2);
    // A relay's connection carries its publishes and a handful of JetStream API requests at start.
    for (const c of relayConnections) expect(c.in_msgs).toBeGreaterThan(10);
    const perDispatcher = dispatcherPids.map((pid) => received.filter((r) => sentBy.get(r.remotePort) === pid).length);
    expect(perDispatcher.every((n) => n > 0), `requests per dispatcher: ${perDispatcher.join(', ')}`).toBe(true);

    // The books balance, checked by the operator's command.
    const verify = await runCheckout(['ledger', 'verify'], env);
    expect(verify.stderr).toBe('');
    expect(verify.code).toBe(0);

    console.info(
      `[many processes] ${events.length} events (${N} orders, ${paid.length} paid, ${unpaid.length} expired, ${subscriptions.length} subscriptions × 2 cycles, ${payouts.length} payouts); ` +
        `relay connections in_msgs ${relayConnections.map((c) => c.in_msgs).join(' / ')}; webhooks per dispatcher ${perDispatcher.join(' / ')}; ${repeated.length} sent again after a failed attempt`,
    );
  }, 420_000);
});
