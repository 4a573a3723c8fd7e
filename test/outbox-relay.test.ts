/**
 * The outbox relay against the real Postgres and the real NATS JetStream:
 * events written with the order, published once under msgID = event id,
 * concurrent relays, a NATS outage, and a relay killed between publish and mark.
 * And without NATS: the relay appending to the event stream in Postgres, each
 * event once, in an order no consumer can overtake (concurrent relays, a batch
 * that commits late).
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import pg from 'pg';
import { EVENT_STREAM_CHANNEL, PostgresOutboxReader } from '../src/modules/event/adapters/postgres/postgres-event-outbox.ts';
import { PostgresEventSubscription } from '../src/modules/event/adapters/postgres/postgres-event-subscription.ts';
import { connectNats, ensureStream, type StreamOptions } from '../src/modules/event/adapters/nats/jetstream.ts';
import { JetStreamEventPublisher } from '../src/modules/event/adapters/nats/jetstream-event-publisher.ts';
import { createOutboxRelay, type OutboxRelay } from '../src/modules/event/application/relay-outbox.ts';
import type { EventPublisher } from '../src/modules/event/ports/event-publisher.port.ts';
import type { Knex } from 'knex';
import { MACHINE_NATS_URL, startOwnNatsServer, uniqueStream } from './support/nats-server.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';
import { waitFor } from './support/wait.ts';
import { requires } from './support/requirements.ts';

const RELAY_THEN_DIE = fileURLToPath(new URL('./fixtures/relay-then-die.ts', import.meta.url));

// ---------------------------------------------------------------------------
// Helpers

interface StreamEntry {
  readonly seq: number;
  readonly subject: string;
  readonly msgId: string | undefined;
  readonly body: Record<string, unknown>;
}

/** Message count, last sequence and every stored message of a stream. */
async function readStream(jsm: JetStreamManager, stream: string): Promise<{ messages: number; lastSeq: number; entries: StreamEntry[] }> {
  const { state } = await jsm.streams.info(stream);
  const seqs: number[] = [];
  if (state.messages > 0) for (let seq = state.first_seq; seq <= state.last_seq; seq += 1) seqs.push(seq);
  const entries: StreamEntry[] = [];
  for (let i = 0; i < seqs.length; i += 50) {
    const chunk = await Promise.all(
      seqs.slice(i, i + 50).map(async (seq) => {
        const msg = await jsm.streams.getMessage(stream, { seq });
        return { seq: msg.seq, subject: msg.subject, msgId: msg.header?.get('Nats-Msg-Id') || undefined, body: msg.json<Record<string, unknown>>() };
      }),
    );
    entries.push(...chunk);
  }
  return { messages: state.messages, lastSeq: state.last_seq, entries };
}

async function messageCount(jsm: JetStreamManager, stream: string): Promise<number> {
  return (await jsm.streams.info(stream)).state.messages;
}

/** Creates n orders through the REST API; every one must answer 201. Returns the order ids. */
async function createOrders(service: TestService, secretKey: string, n: number, referencePrefix = 'INV'): Promise<string[]> {
  const ids: string[] = [];
  const concurrency = 25;
  for (let start = 0; start < n; start += concurrency) {
    const responses = await Promise.all(
      Array.from({ length: Math.min(concurrency, n - start) }, (_, i) =>
        service.app.inject({
          method: 'POST',
          url: '/v1/orders',
          headers: { authorization: `Bearer ${secretKey}` },
          payload: orderBody({ reference: `${referencePrefix}-${start + i}` }),
        }),
      ),
    );
    for (const res of responses) {
      expect(res.statusCode, res.body).toBe(201);
      ids.push(res.json<{ id: string }>().id);
    }
  }
  return ids;
}

interface EventRowView {
  id: string;
  order_id: string;
  type: string;
  published_at: Date | null;
}

async function eventRows(knex: Knex): Promise<EventRowView[]> {
  return knex('events').select('id', 'order_id', 'type', 'published_at').orderBy('id');
}

async function unpublishedCount(knex: Knex): Promise<number> {
  return Number((await knex('events').whereNull('published_at').count<{ count: string }[]>('* as count'))[0]!.count);
}

/** A publisher that records the ids of every batch the wrapped publisher stored successfully; `before` runs first. */
function recording(inner: EventPublisher, before?: () => Promise<void>): EventPublisher & { readonly published: string[] } {
  const published: string[] = [];
  return {
    published,
    async publish(events) {
      await before?.();
      await inner.publish(events);
      published.push(...events.map((event) => event.id));
    },
  };
}

/**
 * A meeting point for n parties: each one's first arrival waits until all n have arrived (or fails after
 * timeoutMs); later arrivals pass at once.
 */
function rendezvous(n: number, timeoutMs: number): (party: string) => Promise<void> {
  const arrived = new Set<string>();
  let release!: () => void;
  const all = new Promise<void>((resolve) => (release = resolve));
  return async (party) => {
    arrived.add(party);
    if (arrived.size === n) release();
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        all,
        new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`only ${[...arrived].join(', ')} of ${n} parties met within ${timeoutMs} ms`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  };
}

function relayOf(
  knex: Knex,
  publisher: EventPublisher | undefined,
  overrides: { batchSize?: number; idleMs?: number; maxBackoffMs?: number; appendToStream?: boolean } = {},
): { relay: OutboxRelay; errors: unknown[] } {
  const errors: unknown[] = [];
  const relay = createOutboxRelay({
    reader: new PostgresOutboxReader(knex, { appendToStream: overrides.appendToStream }),
    publisher,
    batchSize: overrides.batchSize ?? 50,
    idleMs: overrides.idleMs ?? 20,
    maxBackoffMs: overrides.maxBackoffMs ?? 250,
    onError: (err) => errors.push(err),
  });
  return { relay, errors };
}

// ---------------------------------------------------------------------------
// Shared machine NATS connection, per-test resources

let nc: NatsConnection;
let jsm: JetStreamManager;
const createdStreams: string[] = [];
let cleanups: (() => Promise<unknown>)[] = [];

/** A fresh stream on the machine's NATS, deleted in afterAll. */
async function newStream(): Promise<StreamOptions> {
  const stream = uniqueStream();
  await ensureStream(nc, stream);
  createdStreams.push(stream.stream);
  return stream;
}

/** A service on a database of its own, closed after the test. */
async function newService(): Promise<{ service: TestService; secretKey: string }> {
  const service = await startTestService();
  cleanups.push(() => service.close());
  const { test_secret_key: secretKey } = await service.sandbox();
  return { service, secretKey };
}

function stopAfterTest(relay: OutboxRelay): OutboxRelay {
  cleanups.push(() => relay.stop());
  return relay;
}

afterEach(async () => {
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  if (!nc) return;
  for (const stream of createdStreams) await jsm.streams.delete(stream).catch(() => undefined);
  await nc.close();
});

// ---------------------------------------------------------------------------

describe('outbox relay (real Postgres, real JetStream)', requires('nats'), () => {
  // Here, not for the file: the suite without NATS below runs where the run has no NATS.
  beforeAll(async () => {
    nc = await connect({ servers: MACHINE_NATS_URL, name: 'outbox-relay-test' });
    jsm = await nc.jetstreamManager();
  });

  test('an order created through the API writes its order.created event in the same transaction; the relay publishes it with Nats-Msg-Id = event id and marks it', async () => {
    const { service, secretKey } = await newService();
    const stream = await newStream();

    const res = await service.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${secretKey}` },
      payload: orderBody({ reference: 'INV-OUTBOX-1', amount: 2500 }),
    });
    expect(res.statusCode, res.body).toBe(201);
    const order = res.json<{ id: string }>();

    const rows = await service.db.knex('events').select('*');
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row).toMatchObject({ type: 'order.created', order_id: order.id, reference: 'INV-OUTBOX-1', sequence: 1, published_at: null });
    expect(row.id).toMatch(/^evt_/);

    // Same transaction: when the event insert fails, the order is rolled back with it.
    await service.db.knex.raw(`
      CREATE FUNCTION fail_outbox() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'outbox insert refused by test'; END $$;
      CREATE TRIGGER fail_outbox BEFORE INSERT ON events FOR EACH ROW
        WHEN (NEW.reference = 'INV-NO-OUTBOX') EXECUTE FUNCTION fail_outbox();
    `);
    const failed = await service.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${secretKey}` },
      payload: orderBody({ reference: 'INV-NO-OUTBOX' }),
    });
    expect(failed.statusCode).toBeGreaterThanOrEqual(500);
    expect(await service.db.knex('orders').where({ reference: 'INV-NO-OUTBOX' }).count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);
    expect(await service.db.knex('events').count<{ count: string }[]>('* as count')).toEqual([{ count: '1' }]);

    const { relay, errors } = relayOf(service.db.knex, new JetStreamEventPublisher(nc, stream));
    expect(await relay.relayOnce()).toBe(1);
    expect(errors).toEqual([]);

    const marked = await service.db.knex('events').where({ id: row.id }).first();
    expect(marked.published_at).toBeInstanceOf(Date);
    expect(await relay.relayOnce()).toBe(0);

    const { messages, entries } = await readStream(jsm, stream.stream);
    expect(messages).toBe(1);
    const [entry] = entries;
    expect(entry!.subject).toBe(`${stream.subjectPrefix}.order.created`);
    expect(entry!.msgId).toBe(row.id);
    expect(entry!.body).toMatchObject({
      id: row.id,
      type: 'order.created',
      order_id: order.id,
      merchant_id: row.merchant_id,
      livemode: false,
      reference: 'INV-OUTBOX-1',
      sequence: 1,
      data: { id: order.id, reference: 'INV-OUTBOX-1', amount: 2500, currency: 'EUR', status: 'pending' },
    });
    const data = entry!.body.data as Record<string, unknown>;
    expect(Number.isInteger(data.amount)).toBe(true);
    expect(typeof entry!.body.created).toBe('string');
    expect(new Date(entry!.body.created as string).getTime()).toBe(new Date(row.created_at).getTime());
  });

  test('two relays running at once over one outbox publish each of 300 events exactly once', async () => {
    const { service, secretKey } = await newService();
    const stream = await newStream();
    const orderIds = await createOrders(service, secretKey, 300);
    const events = await eventRows(service.db.knex);
    expect(events).toHaveLength(300);
    expect(new Set(events.map((e) => e.order_id))).toEqual(new Set(orderIds));

    // A second connection, as a second relay process would have.
    const nc2 = await connect({ servers: MACHINE_NATS_URL, name: 'outbox-relay-test-2' });
    cleanups.push(() => nc2.close());
    // Each relay's first batch waits, its rows locked, until the other relay holds a batch too: so both take
    // part, each while the other's rows are locked, however the machine schedules them. (Relays that blocked
    // on each other's locks would never meet; relays that took the same rows would publish them twice.)
    const meet = rendezvous(2, 20_000);
    const publisherA = recording(new JetStreamEventPublisher(nc, stream), () => meet('A'));
    const publisherB = recording(new JetStreamEventPublisher(nc2, stream), () => meet('B'));
    const a = relayOf(service.db.knex, publisherA, { batchSize: 20 });
    const b = relayOf(service.db.knex, publisherB, { batchSize: 20 });
    stopAfterTest(a.relay).start();
    stopAfterTest(b.relay).start();

    await waitFor('all 300 events marked published', () => unpublishedCount(service.db.knex), (n) => n === 0, 20_000);
    await Promise.all([a.relay.stop(), b.relay.stop()]);
    expect([...a.errors, ...b.errors]).toEqual([]);

    // Both relays took part (they met), and neither was handed an event the other one had (no double publishing).
    expect(publisherA.published.length).toBeGreaterThan(0);
    expect(publisherB.published.length).toBeGreaterThan(0);
    const handed = [...publisherA.published, ...publisherB.published];
    expect(handed).toHaveLength(300);
    expect(new Set(handed)).toEqual(new Set(events.map((e) => e.id)));

    const { messages, entries } = await readStream(jsm, stream.stream);
    expect(messages).toBe(300);
    const msgIds = entries.map((e) => e.msgId);
    expect(new Set(msgIds).size).toBe(300);
    expect(new Set(msgIds)).toEqual(new Set(events.map((e) => e.id)));
    expect(new Set(entries.map((e) => e.body.id))).toEqual(new Set(events.map((e) => e.id)));
  });

  test('orders are accepted while NATS is down; the backlog drains once NATS is back', requires('nats-server'), async () => {
    const { service, secretKey } = await newService();
    const own = await startOwnNatsServer();
    cleanups.push(() => own.destroy());
    const ownNc = await connectNats(own.url, 'outbox-relay-test-own');
    cleanups.push(() => ownNc.close());
    const stream = uniqueStream();
    await ensureStream(ownNc, stream);
    const ownJsm = await ownNc.jetstreamManager();

    const { relay, errors } = relayOf(service.db.knex, new JetStreamEventPublisher(ownNc, stream, 500), { maxBackoffMs: 250 });
    stopAfterTest(relay).start();

    // The relay works while NATS is up.
    const before = await createOrders(service, secretKey, 3, 'UP');
    await waitFor('the first orders published', () => unpublishedCount(service.db.knex), (n) => n === 0);
    expect(await messageCount(ownJsm, stream.stream)).toBe(3);

    await own.stop();
    const during = await createOrders(service, secretKey, 20, 'DOWN');
    expect(during).toHaveLength(20);
    // The relay keeps trying and failing; nothing of the backlog is marked.
    const failuresSoFar = errors.length;
    await waitFor('the relay to report publish failures', async () => errors.length, (n) => n >= failuresSoFar + 2);
    expect(await unpublishedCount(service.db.knex)).toBe(20);
    const unpublished = await service.db.knex('events').whereNull('published_at').pluck('order_id');
    expect(new Set(unpublished)).toEqual(new Set(during));

    await own.start();
    await waitFor('the backlog published after NATS is back', () => unpublishedCount(service.db.knex), (n) => n === 0, 20_000);
    const { messages, entries } = await readStream(ownJsm, stream.stream);
    expect(messages).toBe(23);
    const events = await eventRows(service.db.knex);
    expect(new Set(entries.map((e) => e.msgId))).toEqual(new Set(events.map((e) => e.id)));
    expect(new Set(events.map((e) => e.order_id))).toEqual(new Set([...before, ...during]));
  });

  test('a relay killed between publish and mark: the next relay republishes, JetStream drops the duplicates, all rows end marked', async () => {
    const { service, secretKey } = await newService();
    const stream = await newStream();
    await createOrders(service, secretKey, 20, 'CRASH');
    const events = await eventRows(service.db.knex);
    expect(events).toHaveLength(20);

    // A relay process publishes the oldest 10 and SIGKILLs itself before marking them.
    const child = spawn(process.execPath, [RELAY_THEN_DIE, service.db.url, MACHINE_NATS_URL, JSON.stringify(stream), '10'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`relay-then-die did not exit within 15 s; stderr: ${stderr}`));
      }, 15_000);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal });
      });
    });
    expect(exit, stderr).toEqual({ code: null, signal: 'SIGKILL' });
    const diedAfter = JSON.parse(stdout.trim()) as string[];
    expect(diedAfter).toHaveLength(10);

    // Published, but never marked: the dead relay's transaction rolled back.
    const afterCrash = await readStream(jsm, stream.stream);
    expect(afterCrash.messages).toBe(10);
    expect(new Set(afterCrash.entries.map((e) => e.msgId))).toEqual(new Set(diedAfter));
    expect(await unpublishedCount(service.db.knex)).toBe(20);

    // A normal relay takes over (once Postgres has released the dead session's locks).
    const publisher = recording(new JetStreamEventPublisher(nc, stream));
    const { relay, errors } = relayOf(service.db.knex, publisher);
    stopAfterTest(relay).start();
    await waitFor('all rows marked published', () => unpublishedCount(service.db.knex), (n) => n === 0);
    await relay.stop();
    expect(errors).toEqual([]);

    // It did publish the 10 again, and JetStream kept one copy of each.
    expect(publisher.published).toEqual(expect.arrayContaining(diedAfter));
    expect(publisher.published).toHaveLength(20);
    const final = await readStream(jsm, stream.stream);
    expect(final.messages).toBe(20);
    expect(final.lastSeq).toBe(20);
    expect(final.entries.map((e) => e.msgId).sort()).toEqual(events.map((e) => e.id).sort());
    const rows = await eventRows(service.db.knex);
    expect(rows.every((r) => r.published_at instanceof Date)).toBe(true);
  });
});

describe('outbox relay without NATS (the event stream in Postgres)', () => {
  /** The events' stream positions and publication marks. */
  async function streamRows(knex: Knex): Promise<{ id: string; stream_seq: string | null; published_at: Date | null }[]> {
    return knex('events').select('id', 'stream_seq', 'published_at').orderBy('stream_seq');
  }

  test('an order\'s event is appended once: a stream position and published_at in one transaction, and a notification on the stream\'s channel at commit', async () => {
    const { service, secretKey } = await newService();
    const listener = new pg.Client({ connectionString: service.db.url });
    await listener.connect();
    cleanups.push(() => listener.end());
    const notified: string[] = [];
    listener.on('notification', (message) => notified.push(message.channel));
    await listener.query(`LISTEN ${EVENT_STREAM_CHANNEL}`);

    await createOrders(service, secretKey, 3, 'STREAM');
    expect((await streamRows(service.db.knex)).map((row) => [row.stream_seq, row.published_at])).toEqual([[null, null], [null, null], [null, null]]);
    const { relay, errors } = relayOf(service.db.knex, undefined, { appendToStream: true });
    expect(await relay.relayOnce()).toBe(3);
    expect(await relay.relayOnce()).toBe(0);
    expect(errors).toEqual([]);
    const rows = await streamRows(service.db.knex);
    expect(rows.map((row) => row.stream_seq)).toEqual(['1', '2', '3']);
    expect(rows.every((row) => row.published_at instanceof Date)).toBe(true);
    // One notification for the batch, none for the empty pass.
    await waitFor('the notification', () => notified.length, (n) => n >= 1);
    expect(notified).toEqual([EVENT_STREAM_CHANNEL]);
  });

  test('two relays running at once give each of 300 events one stream position, with no position twice', async () => {
    const { service, secretKey } = await newService();
    await createOrders(service, secretKey, 300);
    // As with JetStream: each relay's first batch waits, its rows locked, until the other holds a batch too.
    const meet = rendezvous(2, 20_000);
    const handedA = recording({ publish: async () => undefined }, () => meet('A'));
    const handedB = recording({ publish: async () => undefined }, () => meet('B'));
    const a = relayOf(service.db.knex, handedA, { batchSize: 20, appendToStream: true });
    const b = relayOf(service.db.knex, handedB, { batchSize: 20, appendToStream: true });
    stopAfterTest(a.relay).start();
    stopAfterTest(b.relay).start();
    await waitFor('all 300 events appended', () => unpublishedCount(service.db.knex), (n) => n === 0, 20_000);
    await Promise.all([a.relay.stop(), b.relay.stop()]);
    expect([...a.errors, ...b.errors]).toEqual([]);
    expect(handedA.published.length).toBeGreaterThan(0);
    expect(handedB.published.length).toBeGreaterThan(0);
    const rows = await streamRows(service.db.knex);
    expect(rows).toHaveLength(300);
    expect(new Set(rows.map((row) => row.stream_seq)).size).toBe(300);
    expect(rows.every((row) => row.stream_seq !== null)).toBe(true);
  });

  test('a relay whose batch commits late holds back the next relay\'s positions: a consumer looking in between misses nothing', async () => {
    const { service, secretKey } = await newService();
    await createOrders(service, secretKey, 20, 'LATE');
    const all = (await eventRows(service.db.knex)).map((e) => e.id);
    // A consumer that looks at the stream every 20 ms throughout.
    const seen = new Set<string>();
    const consumption = await new PostgresEventSubscription(service.db.knex, 'late-commit', { installationId: 'ins_test', pollMs: 20 }).consume(
      async ({ event }) => {
        seen.add(event.id);
        return { kind: 'handled' };
      },
      () => undefined,
    );
    cleanups.push(() => consumption.stop());

    // Relay A appends the oldest 10 and keeps its transaction open.
    const reader = new PostgresOutboxReader(service.db.knex, { appendToStream: true });
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let appended!: () => void;
    const aAppended = new Promise<void>((resolve) => (appended = resolve));
    const a = reader.withUnpublished(10, async (batch) => {
      await batch.markPublished();
      appended();
      await held;
    });
    await aAppended;
    // Relay B takes the other 10 (A's rows are locked) and appends them after A's: it has to wait for A's commit.
    const b = reader.withUnpublished(10, async (batch) => {
      expect(batch.events).toHaveLength(10);
      await batch.markPublished();
    });
    // B cannot finish while A is open. Should it (B's positions visible before A's), the consumer takes them
    // first, and moves its position past A's: A's events would never reach it.
    const bFirst = await Promise.race([b.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 1000))]);
    if (bFirst) await waitFor('the consumer to take what B appended', () => seen.size, (n) => n > 0, 10_000);
    release();
    await Promise.all([a, b]);
    await waitFor('every event at the consumer', () => all.filter((id) => !seen.has(id)), (missing) => missing.length === 0, 10_000);
    const rows = await streamRows(service.db.knex);
    expect(rows.map((row) => row.stream_seq)).toEqual(Array.from({ length: 20 }, (_, i) => String(i + 1)));
  });
});
