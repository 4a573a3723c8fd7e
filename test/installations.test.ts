/**
 * Two installations (two databases) on one NATS server, a nats-server of this file's own so the
 * default stream name and subject prefix can be used. A second installation with the same names
 * refuses to start; with names of its own both run side by side and each receiver gets exactly its
 * own webhooks. The dispatcher never acknowledges as handled an event it cannot account for.
 */
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, test } from 'vitest';
import { loadConfig, type Config } from '../src/composition/config.ts';
import { startService, type RunningService } from '../server/service.ts';
import { createDispatcher, DISPATCHER_DURABLE } from '../src/composition/workers.ts';
import { streamOptions } from '../src/composition/events.ts';
import { loadKeyRing } from '../src/composition/vault-keys.ts';
import { StartupError } from '../src/composition/startup.ts';
import { readInstallationId } from '../src/kernel/adapters/postgres/postgres-installation.ts';
import { JetStreamEventSubscription, UnreadableEnvelopeError } from '../src/modules/event/adapters/nats/jetstream-event-subscription.ts';
import type { UnaccountedEvent } from '../src/modules/webhook/application/webhook-dispatcher.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { startOwnNatsServer, type OwnNatsServer } from './support/nats-server.ts';
import { createEndpoint, createOrder, payOrder, pool, Receiver, serviceEnv, startHarness } from './support/webhooks.ts';
import { sleep, waitFor } from './support/wait.ts';
import { requires } from './support/requirements.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));

let nats: OwnNatsServer;
let nc: NatsConnection;
let jsm: JetStreamManager;
let cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  nats = await startOwnNatsServer();
  nc = await connect({ servers: nats.url, name: 'installations-test' });
  jsm = await nc.jetstreamManager();
});

afterEach(async () => {
  const pending = cleanups.reverse();
  cleanups = [];
  for (const cleanup of pending) await cleanup().catch(() => undefined);
});

afterAll(async () => {
  await nc?.close();
  await nats?.destroy();
});

async function database(): Promise<TestDatabase> {
  const db = await createTestDatabase({ migrate: false });
  cleanups.push(() => db.drop());
  return db;
}

async function receiver(): Promise<Receiver> {
  const r = await Receiver.start();
  cleanups.push(() => r.close());
  return r;
}

/**
 * The service's environment on this file's NATS: NATS_STREAM and NATS_SUBJECT_PREFIX are left
 * unset (the defaults) unless extra sets them. Loopback receivers need private networks allowed.
 */
function envOf(db: TestDatabase, extra: Record<string, string> = {}): Record<string, string> {
  const env = serviceEnv(db, { stream: 'unused', subjectPrefix: 'unused' }, nats.url, { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  delete env.NATS_STREAM;
  delete env.NATS_SUBJECT_PREFIX;
  return { ...env, ...extra };
}

async function start(config: Config): Promise<RunningService> {
  const service = await startService(config);
  cleanups.push(() => service.close());
  return service;
}

async function count(db: TestDatabase, table: string): Promise<number> {
  return Number((await db.knex(table).count<{ count: string }[]>('* as count'))[0]!.count);
}

/** Runs `checkout serve` with env; answers its exit code and output once it exits (or kills it after 30 s). */
async function cliServe(env: Record<string, string>): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, ['bin/checkout.ts', 'serve'], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout!.resume();
  const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stderr };
}

describe('two installations on one NATS server', requires('nats-server'), () => {
  test('the second with the default stream refuses to start and says what to set; with names of its own both deliver exactly their own webhooks', async () => {
    const dbA = await database();
    const dbB = await database();

    // An earlier version made the default stream with no owner: the first installation to start adopts it.
    await jsm.streams.add({ name: 'CHECKOUT_EVENTS', subjects: ['checkout.events.>'] });
    cleanups.push(() => jsm.streams.delete('CHECKOUT_EVENTS'));
    const configA = loadConfig(envOf(dbA));
    expect([configA.natsStream, configA.natsSubjectPrefix]).toEqual(['CHECKOUT_EVENTS', 'checkout.events']);
    const a = await start(configA);
    const insA = await readInstallationId(dbA.knex);
    expect(insA).toMatch(/^ins_[0-9A-Za-z]{24}$/);
    expect((await jsm.streams.info('CHECKOUT_EVENTS')).config.description).toContain(insA);

    // B with the same default names: refused before it writes anything or touches the stream.
    const refused = await startService(loadConfig(envOf(dbB))).then(
      (service) => {
        cleanups.push(() => service.close());
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(StartupError);
    const insB = await readInstallationId(dbB.knex);
    expect(insB).not.toBe(insA);
    const message = (refused as Error).message;
    expect(message).toContain('CHECKOUT_EVENTS');
    expect(message).toContain(`belongs to installation ${insA}`);
    expect(message).toContain(insB);
    expect(message).toMatch(/set NATS_STREAM and NATS_SUBJECT_PREFIX/);
    expect(await count(dbB, 'merchants')).toBe(0);
    expect((await jsm.streams.info('CHECKOUT_EVENTS')).config.description).toContain(insA);

    // A stream of its own but the default prefix: JetStream refuses overlapping subjects; the message says so.
    const overlap = await startService(loadConfig(envOf(dbB, { NATS_STREAM: 'CHECKOUT_EVENTS_B' }))).then(
      (service) => {
        cleanups.push(() => service.close());
        return undefined;
      },
      (err: unknown) => err,
    );
    expect(overlap).toBeInstanceOf(StartupError);
    expect((overlap as Error).message).toMatch(/checkout\.events\.> of JetStream stream CHECKOUT_EVENTS_B overlap another stream's.*NATS_SUBJECT_PREFIX/);

    // The operator's view: `checkout serve` exits 1 and prints the same advice.
    const cli = await cliServe(envOf(dbB));
    expect(cli.code).toBe(1);
    expect(cli.stderr).toContain(`checkout: JetStream stream CHECKOUT_EVENTS belongs to installation ${insA}`);
    expect(cli.stderr).toContain('NATS_SUBJECT_PREFIX');

    // With names of its own, B runs beside A.
    const b = await start(loadConfig(envOf(dbB, { NATS_STREAM: 'CHECKOUT_EVENTS_B', NATS_SUBJECT_PREFIX: 'checkoutb.events' })));
    cleanups.push(() => jsm.streams.delete('CHECKOUT_EVENTS_B'));
    expect((await jsm.streams.info('CHECKOUT_EVENTS_B')).config.description).toContain(insB);

    const rA = await receiver();
    const rB = await receiver();
    const baseA = `http://127.0.0.1:${a.port}`;
    const baseB = `http://127.0.0.1:${b.port}`;
    const keyA = a.firstSandbox!.test_secret_key;
    const keyB = b.firstSandbox!.test_secret_key;
    await createEndpoint(baseA, keyA, rA.url(), ['order.paid']);
    await createEndpoint(baseB, keyB, rB.url(), ['order.paid']);

    const payTen = (base: string, key: string, prefix: string) =>
      pool(10, 5, async (i) => {
        const order = await createOrder(base, key, { reference: `${prefix}-${i}` });
        return payOrder(base, key, order.id);
      });
    await Promise.all([payTen(baseA, keyA, 'A'), payTen(baseB, keyB, 'B')]);

    const paidIds = async (db: TestDatabase) => new Set((await db.knex('events').where({ type: 'order.paid' }).pluck('id')) as string[]);
    const paidA = await paidIds(dbA);
    const paidB = await paidIds(dbB);
    expect(paidA.size).toBe(10);
    expect(paidB.size).toBe(10);
    await waitFor('both receivers to accept their 10 order.paid', () => ({ a: rA.acceptedIds().size, b: rB.acceptedIds().size }), (n) => n.a >= 10 && n.b >= 10, 60_000, 50);
    // A grace period in which a stray event of the other installation would still show up.
    await sleep(1000);
    expect(rA.ids()).toEqual(paidA);
    expect(rB.ids()).toEqual(paidB);
    expect(rA.requests.every((r) => r.body.type === 'order.paid')).toBe(true);
    expect(rB.requests.every((r) => r.body.type === 'order.paid')).toBe(true);

    // Each stream's durable consumer is its installation's, and has nothing left to hand over.
    for (const [stream, ins] of [
      ['CHECKOUT_EVENTS', insA],
      ['CHECKOUT_EVENTS_B', insB],
    ] as const) {
      const info = await waitFor(`the consumer of ${stream} drained`, () => jsm.consumers.info(stream, 'webhook-dispatcher'), (i) => i.num_pending === 0 && i.num_ack_pending === 0);
      expect(info.config.description).toContain(ins);
    }
  }, 120_000);

  test('a second installation that meets the other\'s stream only once NATS is back publishes nothing to it; its events wait in its database', async () => {
    const own = await startOwnNatsServer();
    cleanups.push(() => own.destroy());
    const dbA = await database();
    const dbB = await database();
    const envOn = (db: TestDatabase) => ({ ...envOf(db), NATS_URL: own.url });
    const a = await start(loadConfig(envOn(dbA)));
    const ownNc = await connect({ servers: own.url, name: 'installations-test-late' });
    const ownJsm = await ownNc.jetstreamManager();
    const ownsIt = await readInstallationId(dbA.knex);
    await waitFor('the stream made by A', () => ownJsm.streams.info('CHECKOUT_EVENTS').catch(() => undefined), (info) => info?.config.description?.includes(ownsIt) === true);
    await ownNc.close();
    await a.close();

    // B starts while NATS is down: the start cannot be refused, so it accepts orders…
    await own.stop();
    const b = await start(loadConfig(envOn(dbB)));
    const keyB = b.firstSandbox!.test_secret_key;
    const orders = await pool(3, 3, (i) => createOrder(`http://127.0.0.1:${b.port}`, keyB, { reference: `LATE-${i}` }));
    expect(orders).toHaveLength(3);

    // …and once NATS is back and the stream turns out to be A's, it publishes nothing there.
    await own.start();
    const lateNc = await connect({ servers: own.url, name: 'installations-test-late-2' });
    cleanups.push(() => lateNc.close());
    const lateJsm = await lateNc.jetstreamManager();
    // Time for B to reconnect (every 500 ms) and, were it to publish, for its relay to run many times (every 20 ms).
    await sleep(3000);
    const info = await lateJsm.streams.info('CHECKOUT_EVENTS');
    expect(info.config.description).toContain(ownsIt);
    expect(info.state.messages).toBe(0);
    expect(await dbB.knex('events').whereNull('published_at').count<{ count: string }[]>('* as count')).toEqual([{ count: '3' }]);
  }, 60_000);

  test('a foreign event injected into the stream is terminated, not acked, and delivers nothing; an unknown one is retried, then terminated; an earlier version\'s event in the table is delivered', async () => {
    const h = await startHarness({ natsUrl: nats.url, env: { RUN_DISPATCHER: 'false', WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    cleanups.push(() => h.close());
    const stream = h.config.natsStream;
    const prefix = h.config.natsSubjectPrefix;
    const installationId = await readInstallationId(h.db.knex);

    // JetStream's advisories say what the consumer did with each message: nak'ed or terminated (an ack has none).
    const advisories: { kind: string; seq: number; deliveries: number }[] = [];
    const sub = nc.subscribe(`$JS.EVENT.ADVISORY.CONSUMER.*.${stream}.webhook-dispatcher`, {
      callback: (err, msg) => {
        if (err) return;
        const body = msg.json<{ stream_seq: number; deliveries: number }>();
        advisories.push({ kind: msg.subject.split('.')[4]!, seq: body.stream_seq, deliveries: body.deliveries });
      },
    });
    cleanups.push(async () => sub.unsubscribe());
    await nc.flush();

    const r = await receiver();
    const key = h.sandbox.test_secret_key;
    await createEndpoint(h.base, key, r.url(), ['*']);

    const reports: UnaccountedEvent[] = [];
    const errors: unknown[] = [];
    const dispatcher = createDispatcher(h.db.knex, new JetStreamEventSubscription(nc, streamOptions(h.config, installationId), DISPATCHER_DURABLE), h.config, installationId, loadKeyRing(h.config, { warn: () => undefined }), {
      onError: (err) => errors.push(err),
      onUnaccounted: (report) => reports.push(report),
      unknownEventRetryMs: 200,
      unknownEventDeliveries: 3,
    });
    cleanups.push(() => dispatcher.stop());
    await dispatcher.start();

    const envelope = (id: string, orderId: string, extra: Record<string, unknown> = {}) => ({
      id,
      type: 'order.paid',
      created: new Date().toISOString(),
      livemode: false,
      merchant_id: h.sandbox.merchant_id,
      order_id: orderId,
      reference: 'INJECTED',
      sequence: 2,
      data: { id: orderId, reference: 'INJECTED', amount: 2500, currency: 'EUR' },
      ...extra,
    });
    const js = nc.jetstream();
    const inject = async (body: unknown) => (await js.publish(`${prefix}.order.paid`, new TextEncoder().encode(typeof body === 'string' ? body : JSON.stringify(body)))).seq;

    // An event as an earlier version published it (no installation_id) whose row is in our table (already marked published).
    const legacy = envelope('evt_legacyKnownEventInOurTable', 'ord_legacyKnownOrder');
    await h.db.knex('events').insert({
      id: legacy.id,
      merchant_id: legacy.merchant_id,
      livemode: false,
      type: legacy.type,
      subject_type: 'order',
      subject_id: legacy.order_id,
      order_id: legacy.order_id,
      reference: legacy.reference,
      sequence: legacy.sequence,
      data: JSON.stringify(legacy.data),
      created_at: new Date(),
      published_at: new Date(),
    });

    const foreignSeq = await inject(envelope('evt_foreignEventOfAnotherOne', 'ord_foreignOrder', { installation_id: 'ins_AnotherInstallation00000' }));
    const unknownSeq = await inject(envelope('evt_unknownEventNotInTheTable', 'ord_unknownOrder'));
    const unreadableSeq = await inject('not an event');
    const legacySeq = await inject(legacy);
    // And one of our own, the ordinary way: an order through the API, relayed by the service.
    const order = await createOrder(h.base, key, { reference: 'OURS' });

    await waitFor('our order.created and the earlier version\'s event delivered', () => r.acceptedIds(), (ids) => ids.has(legacy.id) && [...ids].some((id) => r.of(id)[0]!.body.data.id === order.id), 30_000);
    await waitFor('the unknown event given up after 3 deliveries', () => advisories, (list) => list.some((x) => x.seq === unknownSeq && x.kind === 'MSG_TERMINATED'), 30_000);
    await waitFor('the foreign and the unreadable message terminated', () => advisories, (list) => [foreignSeq, unreadableSeq].every((seq) => list.some((x) => x.seq === seq && x.kind === 'MSG_TERMINATED')), 30_000);

    const of = (seq: number) => advisories.filter((x) => x.seq === seq).map((x) => `${x.kind}@${x.deliveries}`);
    // The foreign event is terminated on its first delivery: neither acked as handled nor retried.
    expect(of(foreignSeq)).toEqual(['MSG_TERMINATED@1']);
    expect(of(unreadableSeq)).toEqual(['MSG_TERMINATED@1']);
    expect(of(unknownSeq)).toEqual(['MSG_NAKED@1', 'MSG_NAKED@2', 'MSG_TERMINATED@3']);
    expect(of(legacySeq)).toEqual([]);

    expect(reports.map((x) => `${x.reason}:${x.settled}:${x.deliveryCount}`)).toEqual(['foreign:rejected:1', 'unknown:retry:1', 'unknown:retry:2', 'unknown:rejected:3']);
    const foreign = reports[0]!;
    expect(foreign.installationId).toBe('ins_AnotherInstallation00000');
    expect(foreign.message).toMatch(/two installations share this JetStream stream.*NATS_STREAM and NATS_SUBJECT_PREFIX/);
    expect(errors.filter((e) => e instanceof UnreadableEnvelopeError)).toHaveLength(1);

    // Nothing was queued or sent for the foreign and the unknown event.
    expect(r.ids().has('evt_foreignEventOfAnotherOne')).toBe(false);
    expect(r.ids().has('evt_unknownEventNotInTheTable')).toBe(false);
    expect(await h.db.knex('webhook_deliveries').whereIn('event_id', ['evt_foreignEventOfAnotherOne', 'evt_unknownEventNotInTheTable']).count<{ count: string }[]>('* as count')).toEqual([{ count: '0' }]);
    // And nothing is left pending on the consumer.
    await waitFor('the consumer drained', () => jsm.consumers.info(stream, 'webhook-dispatcher'), (i) => i.num_pending === 0 && i.num_ack_pending === 0);
  }, 90_000);
});
