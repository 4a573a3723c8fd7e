import { describe, expect, it } from 'vitest';
import type { HandlerContext } from '@connectrpc/connect';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { DomainEvent } from '../domain/domain-event.ts';
import type { Caller } from '../../merchant/domain/caller.ts';
import { createEventService, DEFAULT_LISTEN_LIMITS, type EventServiceDeps } from './event-service.ts';

const shop = (merchantId: string): Caller => ({ keyId: `key_${merchantId}`, merchantId, livemode: false, keyKind: 'secret', checkoutHost: 'checkout.test' });

function event(n: number, merchantId = 'mer_a'): DomainEvent {
  return {
    id: `evt_${n}`,
    type: 'order.created',
    merchantId,
    livemode: false,
    subject: { type: 'order', id: `ord_${n}` },
    orderId: `ord_${n}`,
    reference: `ref-${n}`,
    sequence: 1,
    createdAt: new Date(0),
    data: { id: `ord_${n}` },
  } as DomainEvent;
}

/** The event service over fakes: a feed that hands the test each tail's onEvent, and counts closes. */
function service(limits?: EventServiceDeps['listen']) {
  const tails: { merchantId: string; onEvent: (event: DomainEvent) => void; closed: boolean }[] = [];
  const deps = {
    authenticate: async (ctx: HandlerContext) => shop(ctx.requestHeader.get('x-merchant') ?? 'mer_a'),
    endpoints: { findDefault: async () => undefined },
    feed: {
      async tail(scope: { merchantId: string }, onEvent: (event: DomainEvent) => void) {
        const tail = { merchantId: scope.merchantId, onEvent, closed: false };
        tails.push(tail);
        return { close: () => void (tail.closed = true) };
      },
    },
    clock: { now: () => new Date(0) },
    listen: limits,
  } as unknown as EventServiceDeps;
  const impl = createEventService(deps);
  const listen = (merchantId = 'mer_a') => {
    const abort = new AbortController();
    const ctx = { signal: abort.signal, requestHeader: new Headers({ 'x-merchant': merchantId }) } as unknown as HandlerContext;
    const stream = impl.listenEvents!({} as never, ctx) as AsyncGenerator<{ eventId: string; signingSecret: string }>;
    return { stream, abort };
  };
  return { tails, listen };
}

async function failure(promise: Promise<unknown>): Promise<ApplicationError> {
  try {
    await promise;
  } catch (err) {
    return err as ApplicationError;
  }
  throw new Error('expected a failure');
}

describe('ListenEvents: a client that stops reading', () => {
  it('is kept up to maxBuffered events; one more closes the feed and ends the stream with listen.fell_behind', async () => {
    const { tails, listen } = service({ maxBuffered: 3 });
    const { stream } = listen();
    expect((await stream.next()).value?.signingSecret).toBe('');
    // The client reads one event, then stops while four more come.
    const reading = stream.next();
    await Promise.resolve();
    tails[0]!.onEvent(event(1));
    expect((await reading).value?.eventId).toBe('evt_1');
    for (const n of [2, 3, 4]) tails[0]!.onEvent(event(n));
    expect(tails[0]!.closed).toBe(false);
    tails[0]!.onEvent(event(5));
    // No longer held: the feed is closed, and what came after is dropped rather than kept.
    expect(tails[0]!.closed).toBe(true);
    tails[0]!.onEvent(event(6));
    const ended = await failure(stream.next());
    expect(ended).toBeInstanceOf(ApplicationError);
    expect(ended.code).toBe('listen.fell_behind');
    expect(ended.message).toMatch(/fell more than 3 events behind .* Start it again; .*\(GET \/v1\/events\)/);
  });

  it('that keeps up is never cut off, however many events pass', async () => {
    const { tails, listen } = service({ maxBuffered: 3 });
    const { stream, abort } = listen();
    await stream.next();
    for (let n = 1; n <= 20; n += 1) {
      tails[0]!.onEvent(event(n));
      tails[0]!.onEvent(event(n + 100));
      expect((await stream.next()).value?.eventId).toBe(`evt_${n}`);
      expect((await stream.next()).value?.eventId).toBe(`evt_${n + 100}`);
    }
    abort.abort();
    expect(tails[0]!.closed).toBe(false);
    expect((await stream.next()).done).toBe(true);
    expect(tails[0]!.closed).toBe(true);
  });

  it('buffers 1,000 events by default', () => {
    expect(DEFAULT_LISTEN_LIMITS).toEqual({ maxBuffered: 1000, maxPerMerchant: 5 });
  });
});

describe('ListenEvents: streams open at once per merchant', () => {
  it('refuses one more than maxPerMerchant with listen.too_many; one that ends frees its place; other merchants are not counted', async () => {
    const { listen } = service({ maxPerMerchant: 2 });
    const a1 = listen('mer_a');
    const a2 = listen('mer_a');
    await a1.stream.next();
    await a2.stream.next();
    const refused = await failure(listen('mer_a').stream.next());
    expect(refused.code).toBe('listen.too_many');
    expect(refused.message).toMatch(/already has 2 checkout listen streams open/);
    // Another merchant has places of its own.
    expect((await listen('mer_b').stream.next()).done).toBe(false);
    // One ends (the client went away): its place is free.
    a1.abort.abort();
    expect((await a1.stream.next()).done).toBe(true);
    expect((await listen('mer_a').stream.next()).done).toBe(false);
  });
});
