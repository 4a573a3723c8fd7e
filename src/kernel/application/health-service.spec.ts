import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus, HealthCheckRequestSchema } from '../../gen/grpc/health/v1/health_pb.ts';
import type { Readiness } from './check-readiness.ts';
import { createHealthService } from './health-service.ts';

const ok = { status: 'ok', required: true } as const;
const READY: Readiness = { ready: true, checks: { postgres: ok, nats: { status: 'ok', required: false } } };
const NATS_DOWN: Readiness = { ready: true, checks: { postgres: ok, nats: { status: 'unavailable', required: false, reason: 'connection closed' } } };
const POSTGRES_DOWN: Readiness = { ready: false, checks: { postgres: { status: 'unavailable', required: true, reason: 'ECONNREFUSED' }, nats: { status: 'ok', required: false } } };

/** A Health client over the service, whose readiness the test sets. */
function healthWith(initial: Readiness) {
  let readiness = initial;
  const services = { 'checkout.v1.OrderService': [], 'checkout.v1.EventService': ['nats'] };
  const client = createClient(
    Health,
    createRouterTransport((router) => router.service(Health, createHealthService({ readiness: async () => readiness, services, pollMs: 1 }))),
  );
  return { client, set: (next: Readiness) => (readiness = next) };
}

describe('createHealthService', () => {
  it('answers the server and each service from the readiness check, a service with its own extra checks', async () => {
    const { client, set } = healthWith(READY);
    expect((await client.check({ service: '' })).status).toBe(ServingStatus.SERVING);
    expect((await client.check({ service: 'checkout.v1.EventService' })).status).toBe(ServingStatus.SERVING);
    set(NATS_DOWN);
    expect((await client.check({ service: '' })).status).toBe(ServingStatus.SERVING);
    expect((await client.check({ service: 'checkout.v1.OrderService' })).status).toBe(ServingStatus.SERVING);
    expect((await client.check({ service: 'checkout.v1.EventService' })).status).toBe(ServingStatus.NOT_SERVING);
    set(POSTGRES_DOWN);
    const list = await client.list({});
    expect(Object.fromEntries(Object.entries(list.statuses).map(([name, r]) => [name, r.status]))).toEqual({
      '': ServingStatus.NOT_SERVING,
      'checkout.v1.OrderService': ServingStatus.NOT_SERVING,
      'checkout.v1.EventService': ServingStatus.NOT_SERVING,
    });
  });

  it('answers NOT_FOUND to Check for a service it does not serve', async () => {
    const { client } = healthWith(READY);
    const err = await client.check({ service: 'checkout.v1.Nope' }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.NotFound);
  });

  it('watches: the status now, then each change only, until the client goes away', async () => {
    const { client, set } = healthWith(READY);
    const abort = new AbortController();
    const seen: ServingStatus[] = [];
    const stream = client.watch(create(HealthCheckRequestSchema, { service: 'checkout.v1.EventService' }), { signal: abort.signal });
    const done = (async () => {
      try {
        for await (const res of stream) {
          seen.push(res.status);
          if (seen.length === 1) set(NATS_DOWN);
          if (seen.length === 2) set(READY);
          if (seen.length === 3) abort.abort();
        }
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Canceled) throw err;
      }
    })();
    await done;
    expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING, ServingStatus.SERVING]);
  });

  it('ends a Watch, known or unknown service, when the call is aborted (the client went away)', async () => {
    const service = createHealthService({ readiness: async () => READY, services: { 'checkout.v1.OrderService': [] }, pollMs: 60_000 });
    for (const name of ['checkout.v1.OrderService', 'checkout.v1.Nope']) {
      const abort = new AbortController();
      // Only the signal of the handler context is read by Watch.
      const watch = service.watch(create(HealthCheckRequestSchema, { service: name }), { signal: abort.signal } as Parameters<typeof service.watch>[1])[Symbol.asyncIterator]();
      const first = await watch.next();
      expect(first.done).toBe(false);
      const next = watch.next();
      abort.abort();
      expect(await next).toEqual({ done: true, value: undefined });
    }
  });

  it('watches an unknown service as SERVICE_UNKNOWN, keeping the call open', async () => {
    const { client } = healthWith(READY);
    const abort = new AbortController();
    const seen: ServingStatus[] = [];
    try {
      for await (const res of client.watch({ service: 'checkout.v1.Nope' }, { signal: abort.signal })) {
        seen.push(res.status);
        abort.abort();
      }
    } catch (err) {
      expect(ConnectError.from(err).code).toBe(Code.Canceled);
    }
    expect(seen).toEqual([ServingStatus.SERVICE_UNKNOWN]);
  });
});
