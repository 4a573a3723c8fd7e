// The contract of the EventSubscription port (src/modules/event/ports/event-subscription.port.ts), which every
// adapter of it passes: the JetStream consumer and the Postgres consumer (test/event-subscription.contract.test.ts).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';
import type { DomainEvent } from '../../src/modules/event/domain/domain-event.ts';
import type { Consumption, ReceivedEvent, Settlement } from '../../src/modules/event/ports/event-subscription.port.ts';
import { waitFor } from '../support/wait.ts';
import { anEvent, openSubscription, openTransport, type SubscriptionOptions, type Transport, type TransportKind } from './event-transports.ts';

const CONSUME_THEN_HANG = fileURLToPath(new URL('../fixtures/consume-then-hang.ts', import.meta.url));

/** The reference of a barrier event that every consumer retries once, after {@link LATE_BARRIER_DELAY_MS}. */
const LATE_BARRIER = 'LATE-BARRIER';
/** Longer than the ack wait the tests that use the late barrier give: whatever was left unsettled is back before it. */
const LATE_BARRIER_DELAY_MS = 2500;
const SHORT_ACK_WAIT_MS = 1000;

/** One handing-over of an event to a handler. */
interface Delivery {
  readonly id: string;
  readonly deliveryCount: number;
  readonly installationId: string | undefined;
  readonly event: DomainEvent;
  /** performance.now() when the handler was called. */
  readonly at: number;
}

/** A consumption whose handler records every delivery and answers as `answer` says (handled by default). */
interface Consumer {
  readonly deliveries: Delivery[];
  readonly errors: unknown[];
  of(id: string): Delivery[];
  stop(): Promise<void>;
}

/** Runs the EventSubscription contract against one transport's adapter. */
export function eventSubscriptionContract(kind: TransportKind): void {
  let transport: Transport;
  let cleanups: (() => Promise<unknown>)[] = [];
  let durables = 0;
  const durable = (what: string) => `contract-${what}-${++durables}`;

  // One transport (database, stream) for the file: making and migrating a database takes seconds. A new
  // durable starts at the beginning of the stream, so a test's consumers see the earlier tests' events
  // too, and each test looks at its own.
  beforeAll(async () => {
    transport = await openTransport(kind);
  });
  afterEach(async () => {
    const pending = cleanups.reverse();
    cleanups = [];
    for (const cleanup of pending) await cleanup().catch(() => undefined);
  });
  afterAll(async () => {
    await transport?.close();
  });

  async function consume(name: string, answer: (delivery: Delivery) => Settlement | Promise<Settlement> = () => ({ kind: 'handled' }), options: SubscriptionOptions = {}): Promise<Consumer> {
    const own = await openSubscription(transport.place, name, options);
    const deliveries: Delivery[] = [];
    const errors: unknown[] = [];
    let consumption: Consumption | undefined;
    const handler = async (received: ReceivedEvent) => {
      const delivery = { id: received.event.id, deliveryCount: received.deliveryCount, installationId: received.installationId, event: received.event, at: performance.now() };
      deliveries.push(delivery);
      if (received.event.reference === LATE_BARRIER && received.deliveryCount === 1) return { kind: 'retry', delayMs: LATE_BARRIER_DELAY_MS } as const;
      return answer(delivery);
    };
    consumption = await own.subscription.consume(handler, (err) => errors.push(err));
    let stopped = false;
    const stop = async () => {
      if (stopped) return;
      stopped = true;
      await consumption?.stop();
      consumption = undefined;
      await own.close();
    };
    cleanups.push(stop);
    return { deliveries, errors, of: (id) => deliveries.filter((d) => d.id === id), stop };
  }

  /** Publishes a barrier event and waits until the consumer has it: whatever was due before it has come by then. */
  async function barrier(consumer: Consumer, timeoutMs = 30_000): Promise<void> {
    const mark = anEvent({ reference: 'BARRIER' });
    await transport.publish([mark]);
    await waitFor('the barrier event', () => consumer.of(mark.id).length, (n) => n > 0, timeoutMs);
  }

  /**
   * Publishes a barrier event the consumer retries once, after longer than the ack wait, and waits for it to
   * come back: by then anything that was handed over and left unsettled has come back too.
   */
  async function lateBarrier(consumer: Consumer): Promise<void> {
    const mark = anEvent({ reference: LATE_BARRIER });
    await transport.publish([mark]);
    await waitFor('the late barrier event, twice', () => consumer.of(mark.id).length, (n) => n >= 2, 30_000);
  }

  test('a durable started after the events were published gets every one, as committed, once handled never again; deliveryCount 1 and the publishing installation', async () => {
    const events = [anEvent(), anEvent({ type: 'order.paid', sequence: 2 }), anEvent({ merchantId: 'mer_other', livemode: true, orderId: null, reference: null, subject: { type: 'payout', id: 'po_contract1' } })];
    await transport.publish(events);
    const name = durable('once');
    const ours = new Set(events.map((e) => e.id));
    const first = await consume(name, undefined, { ackWaitMs: SHORT_ACK_WAIT_MS });
    const mine = (consumer: Consumer) => consumer.deliveries.filter((d) => ours.has(d.id));
    await waitFor('every event', () => mine(first).length, (n) => n >= 3, 30_000);
    expect(mine(first).map((d) => d.event).sort((a, b) => a.id.localeCompare(b.id))).toEqual([...events].sort((a, b) => a.id.localeCompare(b.id)));
    expect(mine(first).map((d) => [d.deliveryCount, d.installationId])).toEqual(events.map(() => [1, transport.place.stream.installationId]));
    await first.stop();

    // The same durable later: the handled events are not handed over again, even past the ack wait.
    const again = await consume(name);
    await lateBarrier(again);
    expect(again.deliveries.map((d) => d.event.reference)).toEqual([LATE_BARRIER, LATE_BARRIER]);
    expect(first.errors).toEqual([]);
  });

  test('each durable name gets every event; a process of one name does not take another name\'s', async () => {
    const a = await consume(durable('a'));
    const b = await consume(durable('b'));
    const events = [anEvent(), anEvent(), anEvent()];
    await transport.publish(events);
    for (const consumer of [a, b]) {
      await waitFor('each event', () => new Set(consumer.deliveries.map((d) => d.id)), (ids) => events.every((e) => ids.has(e.id)), 30_000);
    }
    expect(a.deliveries.filter((d) => d.deliveryCount > 1)).toEqual([]);
  });

  test('retry: handed over again after its delay (deliveryCount 2); reject: never again, even past the ack wait; a handler that throws gets it again and the error is reported', async () => {
    const RETRY_MS = 3000;
    const retried = anEvent({ reference: 'RETRY' });
    const rejected = anEvent({ reference: 'REJECT' });
    const failing = anEvent({ reference: 'THROW' });
    const consumer = await consume(
      durable('settle'),
      (d) => {
        if (d.id === retried.id && d.deliveryCount === 1) return { kind: 'retry', delayMs: RETRY_MS };
        if (d.id === rejected.id) return { kind: 'reject' };
        if (d.id === failing.id && d.deliveryCount === 1) throw new Error('the handler failed');
        return { kind: 'handled' };
      },
      // Shorter than the retry's delay: an event merely left unsettled would be back before the retried one.
      { ackWaitMs: 1000 },
    );
    await transport.publish([retried, rejected, failing]);
    await waitFor('the retried event again', () => consumer.of(retried.id).length, (n) => n >= 2, 30_000);
    const [first, second] = consumer.of(retried.id);
    expect(second!.deliveryCount).toBe(2);
    // Never before its delay (a little allowance for the two clocks: the broker's or Postgres's, and ours).
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(RETRY_MS - 100);
    await waitFor('the failed event again', () => consumer.of(failing.id).length, (n) => n >= 2, 30_000);
    expect(consumer.of(failing.id).map((d) => d.deliveryCount)).toEqual([1, 2]);
    expect(consumer.errors.map((err) => (err as Error).message)).toContain('the handler failed');
    await barrier(consumer);
    expect(consumer.of(rejected.id).map((d) => d.deliveryCount)).toEqual([1]);
    expect(consumer.of(retried.id)).toHaveLength(2);
  });

  test('a process that dies with events in hand: the next one gets them after the ack wait, deliveryCount 2; nothing is lost', async () => {
    const ACK_WAIT_MS = 2000;
    const name = durable('crash');
    const child = spawn(process.execPath, [CONSUME_THEN_HANG, JSON.stringify(transport.place), name, String(ACK_WAIT_MS)], { stdio: ['ignore', 'pipe', 'pipe'] });
    cleanups.push(async () => child.kill('SIGKILL'));
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const lines = () => out.split('\n').filter(Boolean).map((line) => JSON.parse(line) as { id?: string; deliveryCount?: number; consuming?: boolean });
    await waitFor(`the child consuming (stderr: ${err})`, () => lines().some((l) => l.consuming), (ok) => ok, 60_000);
    const inHand = [anEvent({ reference: 'CRASH-1' }), anEvent({ reference: 'CRASH-2' })];
    await transport.publish(inHand);
    await waitFor('both events in the child\'s hands', () => lines().filter((l) => l.id).map((l) => l.id), (ids) => inHand.every((e) => ids.includes(e.id)), 30_000);
    child.kill('SIGKILL');
    await new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(undefined) : child.once('exit', resolve)));

    const next = await consume(name);
    const after = anEvent({ reference: 'AFTER-CRASH' });
    await transport.publish([after]);
    await waitFor('the dead process\'s events and the new one', () => new Set(next.deliveries.map((d) => d.id)), (ids) => [...inHand, after].every((e) => ids.has(e.id)), 60_000);
    expect(inHand.map((e) => next.of(e.id)[0]!.deliveryCount)).toEqual([2, 2]);
    expect(next.of(after.id)[0]!.deliveryCount).toBe(1);
  });

  test('two processes on one durable share its events: each event is handled once, by one of them, and both get some', async () => {
    const name = durable('shared');
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const events = Array.from({ length: 12 }, (_, i) => anEvent({ reference: `SHARED-${i}` }));
    const ours = new Set(events.map((e) => e.id));
    // Both hold this test's events until released (the earlier tests' they handle at once), so neither can
    // take all of them: each holds 4 at most.
    const hold = async (d: Delivery): Promise<Settlement> => {
      if (ours.has(d.id)) await released;
      return { kind: 'handled' };
    };
    const a = await consume(name, hold, { maxInHand: 4 });
    const b = await consume(name, hold, { maxInHand: 4 });
    await transport.publish(events);
    const held = (consumer: Consumer) => consumer.deliveries.filter((d) => ours.has(d.id)).length;
    await waitFor('both processes holding 4 events', () => [held(a), held(b)], ([x, y]) => x! >= 4 && y! >= 4, 30_000);
    release();
    await waitFor('every event handled', () => new Set([...a.deliveries, ...b.deliveries].map((d) => d.id)), (ids) => events.every((e) => ids.has(e.id)), 30_000);
    // Whatever could still come twice has come by the time one of them has a later event.
    const mark = anEvent({ reference: 'BARRIER' });
    await transport.publish([mark]);
    await waitFor('the barrier event', () => a.of(mark.id).length + b.of(mark.id).length, (n) => n > 0, 30_000);
    const all = [...a.deliveries, ...b.deliveries].filter((d) => ours.has(d.id));
    expect(all.map((d) => d.id).sort()).toEqual([...ours].sort());
    expect(a.deliveries.some((d) => ours.has(d.id)) && b.deliveries.some((d) => ours.has(d.id))).toBe(true);
    expect(all.every((d) => d.deliveryCount === 1)).toBe(true);
  });

  test('stop() waits for the event in hand, and its settlement is kept', async () => {
    const name = durable('stop');
    const event = anEvent({ reference: 'STOP' });
    let started!: () => void;
    const inHandler = new Promise<void>((resolve) => (started = resolve));
    let finished = false;
    const consumer = await consume(
      name,
      async (delivery) => {
        // A new durable gets the earlier tests' events first: the stop must come while this one is in hand.
        if (delivery.id !== event.id) return { kind: 'handled' };
        started();
        await new Promise((resolve) => setTimeout(resolve, 300));
        finished = true;
        return { kind: 'handled' };
      },
      { ackWaitMs: SHORT_ACK_WAIT_MS },
    );
    await transport.publish([event]);
    await inHandler;
    await consumer.stop();
    expect(finished).toBe(true);
    const again = await consume(name);
    await lateBarrier(again);
    expect(again.of(event.id)).toEqual([]);
  });

  test('with one event in hand at a time, events come in the order the relay published them, pass after pass', async () => {
    const consumer = await consume(durable('order'), () => ({ kind: 'handled' }), { maxInHand: 1 });
    const events = Array.from({ length: 5 }, (_, i) => anEvent({ reference: `ORDER-${i}` }));
    // One relay pass each: the order between passes is what every transport keeps.
    for (const event of events) await transport.publish([event]);
    const ours = () => consumer.deliveries.filter((d) => d.event.reference?.startsWith('ORDER-'));
    await waitFor('every event', () => ours().length, (n) => n >= events.length, 30_000);
    expect(ours().map((d) => d.event.reference)).toEqual(events.map((e) => e.reference));
  });
}
