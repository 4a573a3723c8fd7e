import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code, ConnectError, createClient } from '@connectrpc/connect';
import { createConnectTransport } from '@connectrpc/connect-node';
import { EventService } from '../src/gen/checkout/v1/webhook_pb.ts';
import { verifyWebhook } from '../sdk/index.ts';
import { signatureHeader } from '../src/modules/webhook/application/signature.ts';
import { createOrder, EVENTS_MODES, payOrder, startHarness, type Harness } from './support/webhooks.ts';
import { requiresForEvents } from './support/requirements.ts';

// The real EventService.ListenEvents behind `checkout listen`: the live tail over NATS, and over the event
// stream in Postgres when there is no NATS (the NATS mode skipped, and named, where the run has no NATS).
for (const mode of EVENTS_MODES) describe(`EventService.ListenEvents (events: ${mode})`, requiresForEvents(mode), () => {
  let h: Harness;
  let events: ReturnType<typeof createClient<typeof EventService>>;

  beforeAll(async () => {
    h = await startHarness({ events: mode });
    events = createClient(EventService, createConnectTransport({ baseUrl: h.base, httpVersion: '1.1' }));
  });
  afterAll(async () => {
    await h?.close();
  });

  it('streams the sandbox secret first, then each of the sandbox\'s events as webhook bodies, and nothing of others', async () => {
    const other = await h.merchant('Another shop');
    const abort = new AbortController();
    const stream = events.listenEvents({}, { headers: { authorization: `Bearer ${h.sandbox.test_secret_key}` }, signal: abort.signal });
    const iterator = stream[Symbol.asyncIterator]();
    const first = await iterator.next();
    expect(first.value?.signingSecret).toBe(h.sandbox.webhook_secret);

    // Subscribed before the events happen: the tail only shows what comes after.
    await createOrder(h.base, other.test_secret_key, { reference: 'not-mine' });
    const order = await createOrder(h.base, h.sandbox.test_secret_key, { reference: 'listen-1' });
    await payOrder(h.base, h.sandbox.test_secret_key, order.id);

    const seen: { type: string; reference: unknown }[] = [];
    while (seen.length < 2) {
      const next = await iterator.next();
      if (next.done) break;
      const message = next.value;
      // The body is exactly what an endpoint would receive: it verifies when signed with the streamed secret.
      const t = Math.floor(Date.now() / 1000);
      const event = verifyWebhook(message.body, signatureHeader([h.sandbox.webhook_secret], t, message.body), h.sandbox.webhook_secret);
      expect(event.id).toBe(message.eventId);
      seen.push({ type: message.type, reference: (event.data as { reference?: unknown }).reference });
    }
    abort.abort();
    expect(seen).toEqual([
      { type: 'order.created', reference: 'listen-1' },
      { type: 'order.paid', reference: 'listen-1' },
    ]);
  });

  it('refuses a sixth stream of one merchant open at once with resource_exhausted, and takes one again once a stream ends', async () => {
    const shop = await h.merchant('Five listeners');
    const headers = { authorization: `Bearer ${shop.test_secret_key}` };
    const open = Array.from({ length: 5 }, () => new AbortController());
    for (const abort of open) {
      const iterator = events.listenEvents({}, { headers, signal: abort.signal })[Symbol.asyncIterator]();
      expect((await iterator.next()).value?.signingSecret).toBe(shop.webhook_secret);
    }
    const sixth = async () => {
      try {
        for await (const message of events.listenEvents({}, { headers })) return message;
      } catch (err) {
        return ConnectError.from(err);
      }
      return undefined;
    };
    const refused = await sixth();
    expect(refused).toBeInstanceOf(ConnectError);
    expect((refused as ConnectError).code).toBe(Code.ResourceExhausted);
    expect((refused as ConnectError).rawMessage).toMatch(/already has 5 checkout listen streams open/);
    // Another merchant is not counted against this one.
    const other = events.listenEvents({}, { headers: { authorization: `Bearer ${h.sandbox.test_secret_key}` } })[Symbol.asyncIterator]();
    expect((await other.next()).done).toBe(false);
    await other.return?.();
    // One of the five goes away: its place is free again (once the server has seen it go).
    open.shift()!.abort();
    let again: unknown;
    for (let tries = 0; tries < 50; tries += 1) {
      again = await sixth();
      if (!(again instanceof ConnectError)) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(again).toMatchObject({ signingSecret: shop.webhook_secret });
    for (const abort of open) abort.abort();
  });

  it('refuses a live key', async () => {
    const stream = events.listenEvents({}, { headers: { authorization: `Bearer ${h.sandbox.live_secret_key}` } });
    const failure = await (async () => {
      try {
        for await (const _ of stream) return undefined;
      } catch (err) {
        return ConnectError.from(err);
      }
      return undefined;
    })();
    expect(failure?.code).toBe(Code.InvalidArgument);
    expect(failure?.rawMessage).toMatch(/test keys only/);
  });
});
