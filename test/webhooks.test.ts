/**
 * Webhooks through each of the events' transports: NATS JetStream (NATS_URL set) and the event stream
 * in Postgres (no NATS_URL). The service runs in this process (startService, own database and stream,
 * short retry schedule), receivers are real node:http servers on 127.0.0.1, and what they get is
 * checked with the merchant SDK's verifier.
 *
 * Here is what depends on how events reach the dispatcher: an event delivered exactly once, a subject
 * other than an order, the relay and the dispatcher in a process of their own, a dispatcher killed with
 * deliveries in flight, and the transport going away (NATS restarted; the LISTEN connection cut). What
 * happens once an event is queued for delivery is in test/webhook-deliveries.test.ts, run once.
 */
import type { ChildProcess } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { PostgresEventOutbox } from '../src/modules/event/adapters/postgres/postgres-event-outbox.ts';
import type { DomainEvent } from '../src/modules/event/domain/domain-event.ts';
import { verifyWebhook } from '../sdk/index.ts';
import { startOwnNatsServer } from './support/nats-server.ts';
import {
  api,
  createEndpoint,
  createOrder,
  deliveryHelpers,
  EVENTS_MODES,
  payOrder,
  pool,
  Receiver,
  serviceEnv,
  spawnCheckout,
  spawnDispatcher,
  startHarness,
  timestampOf,
  v1Parts,
  type Harness,
  type ReceivedRequest,
} from './support/webhooks.ts';
import { sleep, waitFor } from './support/wait.ts';
import { requires, requiresForEvents } from './support/requirements.ts';

// The NATS mode is skipped, and named in the run's last line, where the run has no NATS.
for (const mode of EVENTS_MODES) describe(`webhooks (events: ${mode})`, requiresForEvents(mode), () => {
  let h: Harness;
  let cleanups: (() => Promise<unknown>)[] = [];
  const { attemptsOf, eventOf, deliveryRows, paidOrder } = deliveryHelpers(() => h);

  async function receiver(...args: Parameters<typeof Receiver.start>): Promise<Receiver> {
    const r = await Receiver.start(...args);
    cleanups.push(() => r.close());
    return r;
  }

  beforeAll(async () => {
    h = await startHarness({ events: mode });
  });
  afterEach(async () => {
    const pending = cleanups.reverse();
    cleanups = [];
    for (const cleanup of pending) await cleanup().catch(() => undefined);
  });
  afterAll(async () => {
    await h?.close();
  });

  describe('delivery', () => {
    test('a paid order is delivered once, signed, with the documented envelope; order.created is not sent to an order.paid endpoint; the attempt is logged', async () => {
      const shop = await h.merchant();
      const r = await receiver();
      const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url('/hooks/checkout'), ['order.paid']);
      expect(endpoint).toMatchObject({ object: 'webhook_endpoint', url: r.url('/hooks/checkout'), enabled_events: ['order.paid'], status: 'enabled', disabled_reason: null, is_default: false, livemode: false });
      expect(endpoint.id).toMatch(/^we_/);
      expect(endpoint.secret).toMatch(/^whsec_[0-9A-Za-z]{32}$/);

      const payingFrom = Date.now();
      const { order, paid, eventId, event } = await paidOrder(shop.test_secret_key, 'INV-WH-1');
      expect(paid).toMatchObject({ status: 'paid', method: 'bank_transfer' });
      await waitFor('the order.paid delivery', () => r.requests.length, (n) => n >= 1);
      await waitFor('the delivery to be settled', () => deliveryRows(endpoint.id), (rows) => rows.every((row) => row.status !== 'pending'));
      await sleep(400); // a second request (a duplicate, or order.created) would come within this

      expect(r.requests).toHaveLength(1);
      const [req] = r.requests as [ReceivedRequest];
      expect(req.method).toBe('POST');
      expect(req.path).toBe('/hooks/checkout');
      expect(req.headers['content-type']).toBe('application/json');
      expect(req.headers['checkout-event-id']).toBe(eventId);
      expect(v1Parts(req.signature)).toHaveLength(1);

      const verified = verifyWebhook(req.raw, req.signature, endpoint.secret);
      expect(verified).toEqual({
        type: 'order.paid',
        id: eventId,
        created: event.created_at.toISOString(),
        livemode: false,
        sequence: 2,
        data: { id: order.id, reference: 'INV-WH-1', amount: 2500, currency: 'EUR', method: 'bank_transfer', settlement: paid.settlement },
      });
      expect(paid.settlement).toEqual({ currency: 'EUR', amount: expect.any(Number) });
      // Compact JSON, the envelope's fields in the documented order.
      expect(req.raw.toString('utf8')).toBe(JSON.stringify(verified));
      expect(Object.keys(verified)).toEqual(['type', 'id', 'created', 'livemode', 'sequence', 'data']);
      // Signed "now": the timestamp is taken at the attempt, so after the payment was asked for and before the request arrived.
      expect(timestampOf(req.signature)).toBeGreaterThanOrEqual(Math.floor(payingFrom / 1000));
      expect(timestampOf(req.signature)).toBeLessThanOrEqual(Math.floor(req.at / 1000));

      // order.created happened (and was consumed before order.paid) but this endpoint never had it queued.
      const created = await eventOf(order.id, 'order.created');
      expect(await deliveryRows(endpoint.id)).toEqual([{ event_id: eventId, status: 'succeeded', attempt_count: 1 }]);
      expect(await attemptsOf(shop.test_secret_key, created.id)).toEqual([]);

      const attempts = await attemptsOf(shop.test_secret_key, eventId);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ event_id: eventId, endpoint_id: endpoint.id, status_code: 200, error: null });
      expect(attempts[0]!.id).toMatch(/^wda_/);
      expect(attempts[0]!.duration_ms).toBeGreaterThanOrEqual(0);
    });

    test("a payout event (no order, no reference) goes through the outbox, the events' transport and a signed webhook, and the event log shows its subject", async () => {
      const shop = await h.merchant();
      const r = await receiver();
      const endpoint = await createEndpoint(h.base, shop.test_secret_key, r.url(), ['payout.settled']);
      const event: DomainEvent = {
        id: `evt_payout${Date.now()}`,
        type: 'payout.settled',
        merchantId: shop.merchant_id,
        livemode: false,
        subject: { type: 'payout', id: 'po_TestPayout0000000000001' },
        orderId: null,
        reference: null,
        sequence: 1,
        createdAt: new Date(),
        data: { id: 'po_TestPayout0000000000001', amount: 4880, currency: 'EUR', orders: [] },
      };
      await h.db.knex.transaction((trx) => new PostgresEventOutbox(trx).append(event));
      const [received] = await waitFor('the payout event at the endpoint', () => r.requests, (reqs) => reqs.length === 1, 30_000);
      expect(received!.body).toEqual({ type: 'payout.settled', id: event.id, created: event.createdAt.toISOString(), livemode: false, sequence: 1, data: event.data });
      expect(verifyWebhook(received!.raw, received!.signature, endpoint.secret).id).toBe(event.id);
      const logged = await api(h.base, shop.test_secret_key, 'GET', `/v1/events/${event.id}`);
      expect(logged.json).toMatchObject({ id: event.id, type: 'payout.settled', subject: { type: 'payout', id: 'po_TestPayout0000000000001' }, order_id: null, reference: null });
    });
  });

  describe('failures of the machinery', () => {
    /** `checkout dispatch` as a child process, killed at the end of the test. */
    async function startDispatcher(env: Record<string, string>): Promise<ChildProcess> {
      const child = await spawnDispatcher(env);
      cleanups.push(async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      });
      return child;
    }

    test('serve without workers and `checkout worker --only relay,dispatcher` beside it: every event is published and delivered', async () => {
      const h = await startHarness({ events: mode, env: { SERVE_WORKERS: 'sweeper,janitor' } });
      cleanups.push(() => h.close());
      const r = await receiver();
      await createEndpoint(h.base, h.sandbox.test_secret_key, r.url(), ['order.paid']);
      const order = await createOrder(h.base, h.sandbox.test_secret_key, { reference: 'apart-1' });
      await payOrder(h.base, h.sandbox.test_secret_key, order.id);
      // No relay in the API process: the event waits in the outbox.
      await sleep(500);
      expect((await h.db.knex('events').where({ order_id: order.id }).whereNotNull('published_at')).length).toBe(0);
      const worker = await spawnCheckout(['worker', '--only', 'relay,dispatcher'], serviceEnv(h.db, { stream: h.config.natsStream, subjectPrefix: h.config.natsSubjectPrefix }, h.config.natsUrl), 'Workers running: relay, dispatcher');
      cleanups.push(async () => {
        if (worker.exitCode === null && worker.signalCode === null) worker.kill('SIGKILL');
      });
      await waitFor('order.paid delivered by the worker process', () => r.acceptedIds().size, (n) => n === 1, 60_000);
      expect(r.requests[0]!.body).toMatchObject({ type: 'order.paid', data: { id: order.id, reference: 'apart-1' } });
    }, 150_000);

    test('the dispatcher process SIGKILLed with deliveries in flight: a new one delivers every event (the in-flight ones again once their lease ends)', async () => {
      const LEASE_MS = 3000;
      const env = { WEBHOOK_TIMEOUT_MS: '1000', WEBHOOK_LEASE_MS: String(LEASE_MS) };
      const own = await startHarness({ events: mode, env: { ...env, RUN_DISPATCHER: 'false' } });
      cleanups.push(() => own.close());
      const childEnv = serviceEnv(own.db, { stream: own.config.natsStream, subjectPrefix: own.config.natsSubjectPrefix }, own.config.natsUrl, env);
      const r = await receiver(() => ({ status: 200, delayMs: 500 }));
      const key = own.sandbox.test_secret_key;
      const endpoint = await createEndpoint(own.base, key, r.url(), ['order.created']);

      const first = await startDispatcher(childEnv);
      const orders = await pool(40, 10, (i) => createOrder(own.base, key, { reference: `KILL-${i}` }));
      const eventIds: string[] = (await own.db.knex('events').whereIn('order_id', orders.map((o) => o.id)).pluck('id')) as string[];
      expect(eventIds).toHaveLength(40);

      // Some answered, and requests the process is still waiting on (no answer started): kill it.
      await waitFor('deliveries answered and others in flight', () => ({ accepted: r.acceptedIds().size, waiting: r.waiting().length }), (x) => x.accepted >= 8 && x.waiting >= 4, 30_000, 5);
      // Taken in the same synchronous step as the kill: no answer can be started in between, so the process
      // certainly dies without one for each of these.
      const killedAt = performance.now();
      const inFlight = r.waiting().map((x) => x.body.id);
      const acceptedBefore = r.acceptedIds();
      first.kill('SIGKILL');
      await new Promise((resolve) => first.once('exit', resolve));
      expect(inFlight.length).toBeGreaterThan(0);
      expect(acceptedBefore.size).toBeLessThan(40);
      const queuedAtKill = await own.db.knex('webhook_deliveries').where({ endpoint_id: endpoint.id }).count<{ count: string }[]>('* as count');
      // What the dead process left of them: pending, no attempt recorded, leased for WEBHOOK_LEASE_MS from the
      // claim (the claim stamps updated_at and moves next_attempt_at to the lease's end).
      const leftBehind: { event_id: string; status: string; attempt_count: number; updated_at: Date; next_attempt_at: Date }[] = await own.db
        .knex('webhook_deliveries')
        .where({ endpoint_id: endpoint.id })
        .whereIn('event_id', inFlight)
        .select('event_id', 'status', 'attempt_count', 'updated_at', 'next_attempt_at');
      expect(leftBehind.map((x) => [x.event_id, x.status, x.attempt_count, x.next_attempt_at.getTime() - x.updated_at.getTime()]).sort()).toEqual(
        inFlight.map((id) => [id, 'pending', 0, LEASE_MS]).sort(),
      );

      await startDispatcher(childEnv);
      await waitFor('every event delivered', () => r.acceptedIds(), (ids) => eventIds.every((id) => ids.has(id)), 60_000, 50);
      await waitFor('every delivery settled', () => deliveryRows(endpoint.id, own), (rows) => rows.length === 40 && rows.every((row) => row.status === 'succeeded'), 30_000);

      // At least once: the requests cut off by the kill were made again, and not before their lease ran out.
      const recorded: { event_id: string; attempted_at: Date; status_code: number | null }[] = await own.db
        .knex('webhook_delivery_attempts')
        .where({ endpoint_id: endpoint.id })
        .whereIn('event_id', inFlight)
        .select('event_id', 'attempted_at', 'status_code');
      for (const { event_id: id, next_attempt_at: leaseUntil } of leftBehind) {
        const got = r.of(id);
        expect(got.length, id).toBeGreaterThanOrEqual(2);
        expect(got.at(-1)!.answered).toBe(200);
        // The dead process recorded nothing; every recorded attempt is the new one's, made once the lease had ended.
        const attempts = recorded.filter((x) => x.event_id === id);
        expect(attempts.map((x) => x.status_code), id).toContain(200);
        for (const attempt of attempts) expect(attempt.attempted_at.getTime(), id).toBeGreaterThanOrEqual(leaseUntil.getTime());
      }
      const duplicates = [...new Set(r.requests.map((x) => x.body.id))].filter((id) => r.of(id).length > 1);
      console.info(
        `[dispatcher killed] ${acceptedBefore.size} accepted before the kill, ${inFlight.length} in flight, ${queuedAtKill[0]!.count} queued; ` +
          `${r.requests.length} requests for 40 events (${duplicates.length} sent more than once); all delivered ${Math.round(performance.now() - killedAt)} ms after the kill`,
      );
    }, 150_000);

    // The transport going away: NATS restarted, or without NATS the LISTEN connection cut. Each mode defines
    // its own test, so that neither shows as skipped in the other.
    if (mode === 'nats') {
      test('NATS restarted while orders keep coming: every event reaches the receiver', { ...requires('nats-server'), timeout: 180_000 }, async () => {
        const nats = await startOwnNatsServer();
        cleanups.push(() => nats.destroy());
        const own = await startHarness({ natsUrl: nats.url });
        cleanups.push(() => own.close());
        const r = await receiver();
        const key = own.sandbox.test_secret_key;
        await createEndpoint(own.base, key, r.url(), ['*']);

        // Orders keep coming from four clients throughout, across the stop and the start of NATS.
        let stop = false;
        const failures: string[] = [];
        const load = pool(4, 4, async (worker) => {
          for (let i = 0; !stop; i += 1) {
            const order = await createOrder(own.base, key, { reference: `NATS-${worker}-${i}` }).catch((err: Error) => void failures.push(err.message));
            if (order && i % 3 === 0) await payOrder(own.base, key, order.id).catch((err: Error) => void failures.push(err.message));
            await sleep(20);
          }
        });
        await waitFor('traffic flowing to the receiver', () => r.requests.length, (n) => n >= 20, 30_000);

        // Resolves once the nats-server process has exited: from here NATS is down.
        await nats.stop();
        // A fixed batch while it is down: 20 orders, 7 of them paid. Every one is accepted, and its events wait
        // in the outbox (none can have been published: there is no NATS to publish to).
        const whileDown = await pool(20, 4, async (i) => {
          const order = await createOrder(own.base, key, { reference: `DOWN-${i}` });
          if (i % 3 === 0) await payOrder(own.base, key, order.id);
          return order;
        });
        const downEvents: { id: string; type: string; published_at: Date | null }[] = await own.db.knex('events').whereIn('order_id', whileDown.map((o) => o.id)).select('id', 'type', 'published_at');
        expect(downEvents.filter((e) => e.type === 'order.created')).toHaveLength(20);
        expect(downEvents.filter((e) => e.type === 'order.paid')).toHaveLength(7);
        expect(downEvents.filter((e) => e.published_at !== null)).toEqual([]);

        await nats.start();
        // Orders made after the restart get through too: the relay and the dispatcher are back.
        const afterRestart = await createOrder(own.base, key, { reference: 'AFTER-RESTART' });
        const afterEvent = await waitFor('the event of an order made after the restart', () => own.db.knex('events').where({ order_id: afterRestart.id }).first('id'), (row) => row !== undefined);
        await waitFor('that event at the receiver', () => r.acceptedIds(), (ids) => ids.has(afterEvent.id), 60_000);
        stop = true;
        await load;
        expect(failures).toEqual([]);

        const merchantEvents = async () => (await own.db.knex('events').where({ merchant_id: own.sandbox.merchant_id }).pluck('id')) as string[];
        const all = await merchantEvents();
        expect(all).toEqual(expect.arrayContaining(downEvents.map((e) => e.id)));
        const missing = await waitFor(
          'every event of the events table at the receiver',
          () => all.filter((id) => !r.acceptedIds().has(id)),
          (left) => left.length === 0,
          60_000,
          100,
        );
        expect(missing).toEqual([]);
        expect(new Set(await merchantEvents())).toEqual(new Set(all));
        console.info(`[nats restart] ${all.length} events (${downEvents.length} of them from the 20 orders made while NATS was down), ${r.requests.length} requests`);
      });
    }

    if (mode === 'postgres-outbox') {
      test('the LISTEN connection cut again and again while orders keep coming: every event reaches the receiver, and the connection comes back', async () => {
        const shop = await h.merchant();
        const r = await receiver();
        await createEndpoint(h.base, shop.test_secret_key, r.url(), ['*']);
        // The service's one LISTEN connection (an idle connection shows its last statement).
        const listening = async () =>
          ((await h.db.knex.raw(`SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND query = 'LISTEN checkout_event_stream'`)).rows as { pid: number }[]).map((row) => row.pid);
        await waitFor('the LISTEN connection', listening, (pids) => pids.length === 1, 30_000);

        let stop = false;
        const failures: string[] = [];
        const load = pool(4, 4, async (worker) => {
          for (let i = 0; !stop; i += 1) {
            const order = await createOrder(h.base, shop.test_secret_key, { reference: `CUT-${worker}-${i}` }).catch((err: Error) => void failures.push(err.message));
            if (order && i % 3 === 0) await payOrder(h.base, shop.test_secret_key, order.id).catch((err: Error) => void failures.push(err.message));
            await sleep(20);
          }
        });
        const cut: number[] = [];
        for (let n = 0; n < 3; n += 1) {
          const pids = await waitFor('a LISTEN connection to cut', listening, (found) => found.length > 0 && found.every((pid) => !cut.includes(pid)), 30_000);
          await h.db.knex.raw('SELECT pg_terminate_backend(pid) FROM unnest(?::int[]) AS pid', [pids]);
          cut.push(...pids);
          await waitFor('events still delivered', () => r.requests.length, (count) => count > 10 * (n + 1), 30_000);
        }
        stop = true;
        await load;
        expect(failures).toEqual([]);

        const all = (await h.db.knex('events').where({ merchant_id: shop.merchant_id }).pluck('id')) as string[];
        const missing = await waitFor('every event of the merchant at the receiver', () => all.filter((id) => !r.acceptedIds().has(id)), (left) => left.length === 0, 60_000, 100);
        expect(missing).toEqual([]);
        // A new connection listens again: the wake-ups are back, not only the polling.
        const now = await waitFor('a new LISTEN connection', listening, (pids) => pids.length === 1 && !cut.includes(pids[0]!), 30_000);
        expect(now).toHaveLength(1);
        console.info(`[listen cut] ${all.length} events through 3 cuts of the LISTEN connection, ${r.requests.length} requests`);
      }, 180_000);
    }
  });
});
