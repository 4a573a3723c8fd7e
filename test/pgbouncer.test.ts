/**
 * The service behind PgBouncer in transaction mode (Debian's package): a private pgbouncer on a
 * loopback port, generated config (trust auth with a userlist, pool_mode = transaction, 5 server
 * connections per database), and the whole service, API, relay and dispatcher, with DATABASE_URL
 * through it. Orders with idempotency keys, card payments approved, challenged and declined, a
 * refund, and their webhooks, with the pool multiplexing many client connections over few server
 * ones. PgBouncer before 1.21 cannot carry named prepared statements in transaction mode (shown
 * below), so the service runs with DATABASE_NAMED_STATEMENTS=false and the hot path sends unnamed
 * extended-protocol statements (docs/deploy.md). Skipped, with the reason, when pgbouncer is absent.
 */
import { createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CheckoutService, PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { loadConfig } from '../src/composition/config.ts';
import { createCore } from '../src/composition/core.ts';
import { startService, type RunningService } from '../server/service.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { deleteStream, uniqueStream } from './support/nats-server.ts';
import { pgbouncerVersion, startPgBouncer, type OwnPgBouncer } from './support/pgbouncer.ts';
import { harnessNatsUrl, requires } from './support/requirements.ts';
import { api, createEndpoint, pool, Receiver, serviceEnv } from './support/webhooks.ts';
import { orderBody } from './support/order-fixtures.ts';
import { waitFor } from './support/wait.ts';
import { pageTokenAt } from './support/payments.ts';

const version = pgbouncerVersion();
/** 1.21 added max_prepared_statements: named prepared statements in transaction mode. */
const carriesNamedStatements = version !== undefined && (version[0] > 1 || version[1] >= 21);

// Skipped, with the reason in the run's last line, without pgbouncer (apt-get install pgbouncer, or set PGBOUNCER_BIN; .ci/run installs it).
describe('PgBouncer in transaction mode', requires('pgbouncer'), () => {
  let db: TestDatabase;
  let bouncer: OwnPgBouncer;
  let service: RunningService;
  let receiver: Receiver;
  let shop: SandboxCredentials;
  let base: string;
  const stream = uniqueStream();

  beforeAll(async () => {
    db = await createTestDatabase();
    // The test database at 5 server connections, and the same database once more at 1, for the statement clash below.
    bouncer = await startPgBouncer({ poolSize: 5, databases: { [`${db.name}_one`]: `dbname=${db.name} pool_size=1` } });
    receiver = await Receiver.start();
    // The run's NATS when it has one, else the event stream in Postgres, over PgBouncer too.
    const env = serviceEnv({ url: bouncer.url(db.name) } as TestDatabase, stream, harnessNatsUrl(), {
      // More client connections than PgBouncer has server connections: the pooler multiplexes them.
      DATABASE_POOL_MAX: '12',
      DATABASE_NAMED_STATEMENTS: carriesNamedStatements ? 'true' : 'false',
    });
    service = await startService(loadConfig(env));
    base = `http://127.0.0.1:${service.port}`;
    shop = await service.core.createSandbox({ name: 'Pooled shop', settlementCurrency: 'EUR' });
  }, 90_000);

  afterAll(async () => {
    await service?.close();
    await receiver?.close();
    // Its ledger must balance whatever the pooler did.
    const broken = db ? await createCore({ knex: db.knex, apiBaseUrl: base, checkoutHost: base, onInternalError: () => undefined }).ledger.verify() : undefined;
    await bouncer?.stop();
    await db?.drop();
    await deleteStream(stream.stream);
    expect(broken).toBeUndefined();
  }, 60_000);

  const checkout = () => createClient(CheckoutService, createConnectTransport({ baseUrl: base, httpVersion: '1.1' }));
  const card = (behaviour: string) => {
    const found = shop.test_cards.find((c) => c.behaviour === behaviour)!;
    return { number: found.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada Lovelace' };
  };
  async function newOrder(reference: string, key?: string): Promise<{ id: string; status: number }> {
    const res = await fetch(`${base}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', ...(key ? { 'idempotency-key': key } : {}) },
      body: JSON.stringify(orderBody({ reference })),
    });
    return { id: ((await res.json()) as { id: string }).id, status: res.status };
  }
  async function payCard(orderId: string, behaviour: string) {
    const client = checkout();
    const checkoutId = orderId.slice(4);
    const token = await pageTokenAt(base, checkoutId);
    const { outcome } = await client.submitCardPayment({ checkoutId, submissionId: crypto.randomUUID(), card: card(behaviour) }, { headers: { 'checkout-token': token } });
    return { client, checkoutId, token, outcome: outcome! };
  }
  const orderStatus = async (id: string) => (await api<{ status: string }>(base, shop.test_secret_key, 'GET', `/v1/orders/${id}`)).json.status;

  test('orders with idempotency keys, many at once over a pool of 5 server connections: each created once, a repeated key answers the same order', async () => {
    const created = await pool(60, 12, (i) => newOrder(`PGB-${i}`, `pgb-key-${i}`));
    expect(created.map((c) => c.status)).toEqual(created.map(() => 201));
    const again = await pool(60, 12, (i) => newOrder(`PGB-${i}`, `pgb-key-${i}`));
    expect(again.map((c) => c.id)).toEqual(created.map((c) => c.id));
    const rows = await db.knex('orders').where('reference', 'like', 'PGB-%').count<{ count: string }[]>('* as count');
    expect(Number(rows[0]!.count)).toBe(60);
    // Orders without a key take the other statement of the hot path.
    const unkeyed = await pool(20, 10, (i) => newOrder(`PGB-NOKEY-${i}`));
    expect(unkeyed.every((c) => c.status === 201)).toBe(true);
    // Every statement went through PgBouncer, over at most 5 server connections to the test database.
    const pools = (await bouncer.admin('SHOW POOLS')).filter((p) => p.database === db.name);
    expect(pools).toHaveLength(1);
    expect(pools[0]!.pool_mode).toBe('transaction');
    expect(Number(pools[0]!.sv_active) + Number(pools[0]!.sv_idle) + Number(pools[0]!.sv_used)).toBeLessThanOrEqual(5);
    const stats = (await bouncer.admin('SHOW STATS')).find((s) => s.database === db.name)!;
    expect(Number(stats.total_xact_count)).toBeGreaterThan(160);
  });

  test('card payments approved, challenged and declined, a refund, and their webhooks delivered', async () => {
    await createEndpoint(base, shop.test_secret_key, receiver.url(), ['order.paid', 'order.failed', 'order.refunded']);

    const approved = await newOrder('PGB-approved');
    expect((await payCard(approved.id, 'approved')).outcome.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await orderStatus(approved.id)).toBe('paid');

    const challenged = await newOrder('PGB-challenge');
    const first = await payCard(challenged.id, 'challenge');
    expect(first.outcome.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const done = await first.client.completeAuthentication({ checkoutId: first.checkoutId, attemptId: first.outcome.challenge!.attemptId, code: '123456' }, { headers: { 'checkout-token': first.token } });
    expect(done.outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await orderStatus(challenged.id)).toBe('paid');

    const declined = await newOrder('PGB-declined');
    expect((await payCard(declined.id, 'hard_decline')).outcome.status).toBe(PaymentStatus.FAILED);
    expect(await orderStatus(declined.id)).toBe('failed');

    const refund = await api<{ status: string; amount: number }>(base, shop.test_secret_key, 'POST', `/v1/orders/${approved.id}/refunds`, { amount: 1000, reason: 'requested_by_customer' });
    expect(refund.status).toBe(201);
    expect(refund.json).toMatchObject({ status: 'succeeded', amount: 1000 });

    // Relayed through the outbox and JetStream (or the event stream in Postgres), delivered by the dispatcher, every step over PgBouncer.
    const expected = [
      [approved.id, 'order.paid'],
      [challenged.id, 'order.paid'],
      [declined.id, 'order.failed'],
      [approved.id, 'order.refunded'],
    ];
    const ids: { id: string; order_id: string; type: string }[] = await db.knex('events').whereIn('type', ['order.paid', 'order.failed', 'order.refunded']).whereIn('order_id', [approved.id, challenged.id, declined.id]).select('id', 'order_id', 'type');
    expect(ids.map((e) => [e.order_id, e.type]).sort()).toEqual([...expected].sort());
    await waitFor('the four webhooks', () => receiver.acceptedIds(), (got) => ids.every((e) => got.has(e.id)), 60_000, 100);
  });

  test.runIf(!carriesNamedStatements)('why DATABASE_NAMED_STATEMENTS=false: before 1.21, a named statement prepared by one client clashes with another client\'s on the server connection they share', async () => {
    // Two clients through the database entry with one server connection: both get the same server connection in turn.
    const url = bouncer.url(`${db.name}_one`);
    const a = new pg.Client({ connectionString: url });
    const b = new pg.Client({ connectionString: url });
    await a.connect();
    await b.connect();
    try {
      expect((await a.query({ name: 'create_order', text: 'SELECT 1 AS one' })).rows).toEqual([{ one: 1 }]);
      // b never prepared it, so it sends Parse again: the server connection has the name already.
      await expect(b.query({ name: 'create_order', text: 'SELECT 1 AS one' })).rejects.toThrow(/prepared statement "create_order" already exists/);
      // Unnamed statements (what the service sends with DATABASE_NAMED_STATEMENTS=false) carry no state across transactions.
      expect((await b.query({ text: 'SELECT $1::int AS two', values: [2] })).rows).toEqual([{ two: 2 }]);
      expect((await a.query({ text: 'SELECT $1::int AS three', values: [3] })).rows).toEqual([{ three: 3 }]);
    } finally {
      await a.end();
      await b.end();
    }
  });
});
