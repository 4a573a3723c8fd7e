// The contract of the EventFeed port (the live tail behind `checkout listen`), which every adapter of it
// passes: the NATS feed and the Postgres feed (test/event-feed.contract.test.ts).
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { DomainEvent } from '../../src/modules/event/domain/domain-event.ts';
import type { EventFeed } from '../../src/modules/event/ports/event-subscription.port.ts';
import { waitFor } from '../support/wait.ts';
import { anEvent, openTransport, type Transport, type TransportKind } from './event-transports.ts';

/** Runs the EventFeed contract against one transport's adapter. */
export function eventFeedContract(kind: TransportKind): void {
  let transport: Transport;
  let feed: EventFeed;

  beforeAll(async () => {
    transport = await openTransport(kind);
    feed = transport.feed();
  });
  afterAll(async () => {
    await transport?.close();
  });

  test('shows its merchant\'s events of its mode published after tail() resolved, in publication order, and nothing else; nothing after close()', async () => {
    const scope = { merchantId: 'mer_feed1', livemode: false };
    const before = anEvent({ merchantId: scope.merchantId, reference: 'BEFORE' });
    await transport.publish([before]);
    const seen: DomainEvent[] = [];
    const tail = await feed.tail(scope, (event) => seen.push(event));
    const mine = [anEvent({ merchantId: scope.merchantId, reference: 'MINE-1' }), anEvent({ merchantId: scope.merchantId, type: 'order.paid', sequence: 2, reference: 'MINE-2' })];
    const others = [anEvent({ merchantId: 'mer_feed2', reference: 'OTHER-MERCHANT' }), anEvent({ merchantId: scope.merchantId, livemode: true, reference: 'LIVE' })];
    await transport.publish([mine[0]!, ...others]);
    await transport.publish([mine[1]!]);
    await waitFor('both of its events', () => seen.length, (n) => n >= 2, 30_000);
    tail.close();

    // A second tail, opened before the next event, is the barrier: once it has the event, the closed one would have too.
    const later: DomainEvent[] = [];
    const second = await feed.tail(scope, (event) => later.push(event));
    const afterClose = anEvent({ merchantId: scope.merchantId, reference: 'AFTER-CLOSE' });
    await transport.publish([afterClose]);
    await waitFor('the event at the second tail', () => later.map((e) => e.id), (ids) => ids.includes(afterClose.id), 30_000);
    second.close();
    expect(seen).toEqual(mine);
  });

  test('tails of two merchants each see their own', async () => {
    const a: DomainEvent[] = [];
    const b: DomainEvent[] = [];
    const tailA = await feed.tail({ merchantId: 'mer_feedA', livemode: false }, (event) => a.push(event));
    const tailB = await feed.tail({ merchantId: 'mer_feedB', livemode: false }, (event) => b.push(event));
    const forA = anEvent({ merchantId: 'mer_feedA', reference: 'A' });
    const forB = anEvent({ merchantId: 'mer_feedB', reference: 'B' });
    await transport.publish([forA, forB]);
    await waitFor('each tail its event', () => [a.length, b.length], ([x, y]) => x! >= 1 && y! >= 1, 30_000);
    tailA.close();
    tailB.close();
    expect(a.map((e) => e.reference)).toEqual(['A']);
    expect(b.map((e) => e.reference)).toEqual(['B']);
  });
}
