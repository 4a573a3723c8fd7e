// How often the webhook dispatcher's sender loop asks the delivery queue, a figure test/webhook-deliveries
// asserted on until issue 21 (point 6) moved timing out of the tests: the queue calls (claimDue +
// nextDueAt) per delivery beyond idle polling, and the claims per second when idle and when the only due
// delivery belongs to a disabled endpoint (which should not wake the loop: both near 1000/pollMs).
// The service runs in this process on a database of its own (the test harness's startHarness); a local
// receiver on 127.0.0.1 takes the deliveries.
//
//   npm run bench:dispatcher-polls
//   BENCH_DELIVERIES=40 BENCH_IDLE_SECONDS=5 npm run bench:dispatcher-polls
//
// Environment (all optional):
//   BENCH_DELIVERIES     paid orders delivered one after another (default 12)
//   BENCH_IDLE_SECONDS   how long each rate is measured (default 2)
//   NATS_URL             events over JetStream there; unset: the event stream in Postgres
//   TEST_POSTGRES_URL    Postgres server for the database (default postgres://postgres@127.0.0.1:5432)
//
// Before the fix this guards (claim, claim again, next due, claim on success, next due again) a delivery
// cost 5 calls; it costs about 2 now.
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { PostgresWebhookDeliveryQueue } from '../src/modules/webhook/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { api, createEndpoint, deliveryHelpers, Receiver, startHarness, type Harness } from '../test/support/webhooks.ts';
import { waitFor } from '../test/support/wait.ts';
import { envInt, log } from './support.ts';

const DELIVERIES = envInt('BENCH_DELIVERIES', 12);
const IDLE_MS = envInt('BENCH_IDLE_SECONDS', 2) * 1000;

// Count the sender loop's queue calls: the service runs in this process, on this class.
const calls = { claimDue: 0, nextDueAt: 0 };
const proto = PostgresWebhookDeliveryQueue.prototype;
const claimDue = proto.claimDue;
const nextDueAt = proto.nextDueAt;
proto.claimDue = function (this: PostgresWebhookDeliveryQueue, ...args: Parameters<typeof claimDue>) {
  calls.claimDue += 1;
  return claimDue.apply(this, args);
};
proto.nextDueAt = function (this: PostgresWebhookDeliveryQueue, ...args: Parameters<typeof nextDueAt>) {
  calls.nextDueAt += 1;
  return nextDueAt.apply(this, args);
};
const asked = () => calls.claimDue + calls.nextDueAt;

/** Calls of `count` per second over `ms` of the time that actually passed. */
async function perSecond(count: () => number, ms: number): Promise<number> {
  const before = count();
  const from = performance.now();
  await sleep(ms);
  return (count() - before) / ((performance.now() - from) / 1000);
}

const natsUrl = process.env.NATS_URL?.trim() || undefined;
const h: Harness = await startHarness({ events: natsUrl ? 'nats' : 'postgres-outbox', natsUrl });
const receivers: Receiver[] = [];
try {
  const { paidOrder } = deliveryHelpers(() => h);
  const shop = await h.merchant();
  const key = shop.test_secret_key;
  log(`events over ${h.events}; ${DELIVERIES} deliveries, rates over ${IDLE_MS} ms`);

  // Queue calls per delivery, with and without idle polling (taken off at the rate measured just before).
  const ok = await Receiver.start();
  receivers.push(ok);
  await createEndpoint(h.base, key, ok.url(), ['order.paid']);
  const idlePerMs = (await perSecond(asked, IDLE_MS)) / 1000;
  const mark = asked();
  const from = performance.now();
  for (let i = 0; i < DELIVERIES; i += 1) {
    await paidOrder(key);
    await waitFor(`delivery ${i + 1}`, () => ok.requests.length, (n) => n === i + 1);
  }
  const elapsedMs = performance.now() - from;
  const rawPerDelivery = (asked() - mark) / DELIVERIES;
  const perDelivery = (asked() - mark - idlePerMs * elapsedMs) / DELIVERIES;

  // Claims per second, idle and with a disabled endpoint's delivery due.
  const idleClaims = await perSecond(() => calls.claimDue, IDLE_MS);
  const failing = await Receiver.start(() => ({ status: 500 }));
  receivers.push(failing);
  const endpoint = await createEndpoint(h.base, key, failing.url(), ['order.paid']);
  await paidOrder(key);
  await waitFor('a failed attempt', () => failing.requests.length, (n) => n >= 1);
  await api(h.base, key, 'PATCH', `/v1/webhook_endpoints/${endpoint.id}`, { disabled: true });
  await waitFor('no attempt in flight', () => failing.open, (n) => n === 0, 30_000);
  await sleep(1500); // a retry already leased settles first
  const disabledClaims = await perSecond(() => calls.claimDue, IDLE_MS);

  console.log(
    JSON.stringify(
      {
        bench: 'dispatcher-polls',
        events: h.events,
        deliveries: DELIVERIES,
        delivery_ms: Number((elapsedMs / DELIVERIES).toFixed(1)),
        queue_calls_per_delivery: Number(rawPerDelivery.toFixed(2)),
        queue_calls_per_delivery_beyond_idle: Number(perDelivery.toFixed(2)),
        idle_queue_calls_per_second: Number((idlePerMs * 1000).toFixed(1)),
        idle_claims_per_second: Number(idleClaims.toFixed(1)),
        disabled_endpoint_due_claims_per_second: Number(disabledClaims.toFixed(1)),
      },
      null,
      2,
    ),
  );
} finally {
  for (const r of receivers) await r.close();
  await h.close();
}
