/**
 * The service on a three-node JetStream cluster of its own (nats-server processes on loopback
 * ports, routes on loopback, a store each): NATS_URL names all three, NATS_STREAM_REPLICAS=3
 * keeps three copies of the event stream. Orders are created and paid continuously while the
 * stream's leader is killed (SIGKILL); then every event committed in the outbox is in JetStream
 * exactly once (by its msgID, the event id) and reached a loopback receiver at least once.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import { readStream, startOwnNatsCluster, type OwnNatsCluster } from './support/nats-server.ts';
import { createEndpoint, createOrder, payOrder, pool, Receiver, startHarness, type Harness } from './support/webhooks.ts';
import { sleep, waitFor } from './support/wait.ts';
import { requires } from './support/requirements.ts';

let cluster: OwnNatsCluster;
let h: Harness;
let receiver: Receiver;

beforeAll(async () => {
  cluster = await startOwnNatsCluster(3);
  h = await startHarness({ natsUrl: cluster.url, env: { NATS_STREAM_REPLICAS: '3' } });
  receiver = await Receiver.start();
}, 120_000);

afterAll(async () => {
  await h?.close();
  await receiver?.close();
  await cluster?.destroy();
}, 60_000);

/** A connection to the servers still up, and its JetStream manager (asked again while the cluster is electing, which times requests out). */
async function survivors(): Promise<{ nc: NatsConnection; jsm: JetStreamManager }> {
  const nc = await connect({ servers: cluster.nodes.filter((n) => n.running).map((n) => n.url), timeout: 5000 });
  const jsm = await waitFor('the JetStream API', () => nc.jetstreamManager({ timeout: 10_000 }), () => true, 60_000, 500);
  return { nc, jsm };
}

describe('a three-node JetStream cluster', requires('nats-server'), () => {
  test('the stream has three replicas; its leader killed under load: every committed event is in JetStream once and delivered', async () => {
    const { nc, jsm } = await survivors();
    // JetStream API requests may time out on a busy machine while the cluster settles: asked again until answered.
    const before = await waitFor('the stream info', () => jsm.streams.info(h.config.natsStream), () => true, 60_000, 500);
    expect(before.config.num_replicas).toBe(3);
    expect(before.cluster?.replicas).toHaveLength(2);
    const leader = before.cluster!.leader!;
    const doomed = cluster.nodes.find((n) => n.name === leader)!;
    expect(doomed).toBeDefined();
    await nc.close();

    const key = h.sandbox.test_secret_key;
    await createEndpoint(h.base, key, receiver.url(), ['*']);

    // Four clients create orders and pay every other one, until told to stop.
    let stop = false;
    let created = 0;
    const failures: string[] = [];
    const load = pool(4, 4, async (client) => {
      for (let i = 0; !stop; i += 1) {
        const order = await createOrder(h.base, key, { reference: `CLUSTER-${client}-${i}` }).catch((err: Error) => void failures.push(err.message));
        if (order) created += 1;
        if (order && i % 2 === 0) await payOrder(h.base, key, order.id).catch((err: Error) => void failures.push(err.message));
        await sleep(10);
      }
    });
    await waitFor('webhooks flowing', () => receiver.requests.length, (n) => n >= 30, 60_000);

    // Kill the stream's leader outright, with orders coming in.
    const createdAtKill = created;
    await doomed.kill();
    const killedAt = performance.now();
    // A new leader among the two left, and orders keep being accepted and relayed meanwhile.
    const { nc: after, jsm: jsmAfter } = await survivors();
    const newLeader = await waitFor(
      'a new stream leader',
      () => jsmAfter.streams.info(h.config.natsStream).then((info) => info.cluster?.leader),
      (name) => name !== undefined && name !== leader,
      60_000,
      250,
    );
    const electedAfterMs = Math.round(performance.now() - killedAt);
    await waitFor('orders after the kill', () => created, (n) => n >= createdAtKill + 60, 60_000, 100);
    stop = true;
    await load;
    expect(failures).toEqual([]);

    // Every event committed in the outbox is relayed, and reaches the receiver.
    await waitFor('the outbox drained', () => h.db.knex('events').whereNull('published_at').count<{ count: string }[]>('* as count'), (rows) => Number(rows[0]!.count) === 0, 120_000, 250);
    const events: { id: string }[] = await h.db.knex('events').select('id');
    const ids = events.map((e) => e.id);
    const missing = await waitFor('every event at the receiver', () => ids.filter((id) => !receiver.acceptedIds().has(id)), (left) => left.length === 0, 120_000, 250);
    expect(missing).toEqual([]);

    // Exactly once in JetStream: as many messages as events, each event id once.
    const { messages, msgIds } = await waitFor('the stream read back', () => readStream(jsmAfter, h.config.natsStream), () => true, 60_000, 500);
    await after.close();
    expect(new Set(msgIds).size).toBe(msgIds.length);
    expect(new Set(msgIds)).toEqual(new Set(ids));
    expect(messages).toBe(ids.length);

    const again = new Set(receiver.requests.filter((r) => r.nth > 0).map((r) => r.body.id)).size;
    console.info(`[nats cluster] leader ${leader} killed after ${createdAtKill} orders, new leader ${newLeader} seen ${electedAfterMs} ms later; ${created} orders, ${ids.length} events, each once in the stream; ${receiver.requests.length} webhook requests (${again} events sent more than once)`);
  }, 300_000);
});
