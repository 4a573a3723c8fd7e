// The gRPC tooling people expect, against the real service on a loopback port: `buf curl` (the npm
// package in devDependencies) lists the services and calls them by server reflection alone; gRPC
// health Check and Watch follow Postgres (behind a relay the test cuts and restores) and the
// migrations table; /healthz and /readyz answer load balancers. All traffic stays on 127.0.0.1.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { createGrpcTransport, Http2SessionManager } from '@connectrpc/connect-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Health, HealthCheckResponse_ServingStatus as ServingStatus } from '../src/gen/grpc/health/v1/health_pb.ts';
import { ServerReflection } from '../src/gen/grpc/reflection/v1/reflection_pb.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { loadConfig } from '../src/composition/config.ts';
import { startService, type RunningService } from '../server/service.ts';
import { withGrpcTooling } from '../src/composition/grpc-tooling.ts';
import { MIGRATIONS } from '../src/kernel/adapters/postgres/migrations/index.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { CuttablePostgres } from './support/cuttable-postgres.ts';
import { deleteStream, freePort, uniqueStream } from './support/nats-server.ts';
import { harnessNatsUrl } from './support/requirements.ts';
import { httpRequest } from './support/raw-http.ts';
import { orderBody } from './support/order-fixtures.ts';
import { waitFor } from './support/wait.ts';

const BUF = path.resolve(import.meta.dirname, '..', 'node_modules', '.bin', 'buf');

/** Runs `buf curl` over gRPC (h2c) with these arguments; never throws, so a failure's output can be asserted. */
async function bufCurl(...args: string[]): Promise<{ ok: boolean; stdout: string; stderr: string }> {
  try {
    // Asynchronously: the service answers from this very process.
    const { stdout, stderr } = await promisify(execFile)(BUF, ['curl', '--protocol', 'grpc', '--http2-prior-knowledge', ...args], { timeout: 20_000 });
    return { ok: true, stdout, stderr };
  } catch (err) {
    const { stdout = '', stderr = '' } = err as { stdout?: string; stderr?: string };
    return { ok: false, stdout, stderr };
  }
}

describe('gRPC tooling on the running service', () => {
  const relay = new CuttablePostgres();
  const stream = uniqueStream();
  let db: TestDatabase;
  let service: RunningService;
  let base: string;
  let key: string;
  const sessions: Http2SessionManager[] = [];
  const health = () => {
    const manager = new Http2SessionManager(base);
    sessions.push(manager);
    return createClient(Health, createGrpcTransport({ baseUrl: base, sessionManager: manager }));
  };

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    await relay.up();
    service = await startService({
      ...loadConfig({ LOG_LEVEL: 'silent', SERVE_WORKERS: 'none' }),
      databaseUrl: relay.url(db.url),
      databasePoolMax: 5,
      // The run's NATS when it has one, else events through Postgres.
      natsUrl: harnessNatsUrl(),
      natsStream: stream.stream,
      natsSubjectPrefix: stream.subjectPrefix,
      port: await freePort(),
      host: '127.0.0.1',
    });
    base = `http://127.0.0.1:${service.port}`;
    key = service.firstSandbox!.test_secret_key;
  });
  afterAll(async () => {
    for (const manager of sessions) manager.abort();
    await relay.up().catch(() => undefined);
    await service?.close();
    await relay.down();
    await db?.drop();
    await deleteStream(stream.stream);
  });

  it('buf curl lists every service by reflection, the tooling included', async () => {
    const listed = await bufCurl('--list-methods', base);
    expect(listed).toMatchObject({ ok: true });
    const methods = listed.stdout.trim().split('\n');
    expect(methods).toEqual(
      expect.arrayContaining([
        'checkout.v1.OrderService/ListOrders',
        'checkout.v1.CheckoutService/GetCheckout',
        'checkout.v1.EventService/ListenEvents',
        'grpc.health.v1.Health/Check',
        'grpc.health.v1.Health/Watch',
        'grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
        'grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
      ]),
    );
    // The older reflection protocol that some tools still ask for lists the same.
    const alpha = await bufCurl('--reflect-protocol', 'grpc-v1alpha', '--list-methods', base);
    expect(alpha.stdout.trim().split('\n')).toEqual(methods);
  });

  it('buf curl calls Health/Check and OrderService/ListOrders with no proto files', async () => {
    const overall = await bufCurl('-d', '{}', `${base}/grpc.health.v1.Health/Check`);
    expect(overall).toMatchObject({ ok: true });
    expect(JSON.parse(overall.stdout)).toEqual({ status: 'SERVING' });
    const orders = await bufCurl('-d', '{"service":"checkout.v1.OrderService"}', `${base}/grpc.health.v1.Health/Check`);
    expect(JSON.parse(orders.stdout)).toEqual({ status: 'SERVING' });
    const unknown = await bufCurl('-d', '{"service":"checkout.v1.Nope"}', `${base}/grpc.health.v1.Health/Check`);
    expect(unknown.ok).toBe(false);
    expect(JSON.parse(unknown.stderr)).toMatchObject({ code: 'not_found' });

    const created = await httpRequest(service.port, 'POST', '/v1/orders', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, JSON.stringify(orderBody()));
    expect(created.status).toBe(201);
    const orderId = (JSON.parse(created.body) as { id: string }).id;
    for (const protocol of ['grpc-v1', 'grpc-v1alpha']) {
      const listed = await bufCurl('--reflect-protocol', protocol, '-H', `Authorization: Bearer ${key}`, '-d', '{"limit":10}', `${base}/checkout.v1.OrderService/ListOrders`);
      expect(listed).toMatchObject({ ok: true });
      const body = JSON.parse(listed.stdout) as { orders: { id: string }[] };
      expect(body.orders.map((o) => o.id)).toContain(orderId);
    }
    const refused = await bufCurl('-d', '{}', `${base}/checkout.v1.OrderService/ListOrders`);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'unauthenticated' });
  });

  it('health Check and Watch over gRPC follow Postgres; /healthz stays 200 while /readyz turns 503', async () => {
    const client = health();
    expect((await client.check({ service: '' })).status).toBe(ServingStatus.SERVING);
    expect((await client.check({ service: OrderService.typeName })).status).toBe(ServingStatus.SERVING);
    const err = await client.check({ service: 'checkout.v1.Nope' }).catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.NotFound);

    const abort = new AbortController();
    const seen: ServingStatus[] = [];
    const watching = (async () => {
      try {
        for await (const res of health().watch({ service: OrderService.typeName }, { signal: abort.signal })) {
          seen.push(res.status);
          if (seen.length === 1) await relay.down();
          if (seen.length === 2) {
            // While Postgres cannot be reached: Check agrees, /healthz is alive, /readyz is not ready.
            expect((await client.check({ service: '' })).status).toBe(ServingStatus.NOT_SERVING);
            expect((await httpRequest(service.port, 'GET', '/healthz')).status).toBe(200);
            const readyz = await httpRequest(service.port, 'GET', '/readyz');
            expect(readyz.status).toBe(503);
            expect(JSON.parse(readyz.body)).toMatchObject({ ready: false, checks: { postgres: { status: 'unavailable' }, migrations: { status: 'unavailable' } } });
            await relay.up();
          }
          if (seen.length === 3) abort.abort();
        }
      } catch (e) {
        if (ConnectError.from(e).code !== Code.Canceled) throw e;
      }
    })();
    await watching;
    expect(seen).toEqual([ServingStatus.SERVING, ServingStatus.NOT_SERVING, ServingStatus.SERVING]);
  });

  it('/readyz and health are not ready while the latest migration is missing from knex_migrations', async () => {
    const latest = MIGRATIONS.at(-1)![0];
    const [row] = await db.knex('knex_migrations').where({ name: latest }).select('*');
    expect(row).toBeDefined();
    await db.knex('knex_migrations').where({ name: latest }).delete();
    try {
      const readyz = await waitFor('unreadiness', () => httpRequest(service.port, 'GET', '/readyz'), (r) => r.status === 503);
      expect(JSON.parse(readyz.body)).toMatchObject({
        ready: false,
        checks: { postgres: { status: 'ok' }, migrations: { status: 'unavailable', required: true, reason: expect.stringContaining(latest) } },
        error: { code: 'service_unavailable', message: expect.stringContaining('migrations') },
      });
      expect((await health().check({ service: '' })).status).toBe(ServingStatus.NOT_SERVING);
    } finally {
      await db.knex('knex_migrations').insert(row);
    }
    const ready = await waitFor('readiness', () => httpRequest(service.port, 'GET', '/readyz'), (r) => r.status === 200);
    expect(JSON.parse(ready.body)).toMatchObject({ ready: true, checks: { postgres: { status: 'ok' }, migrations: { status: 'ok' } } });
  });
});

describe('GRPC_REFLECTION', () => {
  it('is on by default, off by default when NODE_ENV is production, and either way when set', () => {
    expect(loadConfig({}).grpcReflection).toBe(true);
    expect(loadConfig({ NODE_ENV: 'test' }).grpcReflection).toBe(true);
    expect(loadConfig({ NODE_ENV: 'production' }).grpcReflection).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', GRPC_REFLECTION: 'on' }).grpcReflection).toBe(true);
    expect(loadConfig({ GRPC_REFLECTION: 'off' }).grpcReflection).toBe(false);
    expect(() => loadConfig({ GRPC_REFLECTION: 'yes' })).toThrow(/GRPC_REFLECTION/);
  });

  it('off: reflection is unimplemented, health still answers', async () => {
    const readiness = async () => ({ ready: true, checks: {} });
    const transport = createRouterTransport(withGrpcTooling(() => undefined, { readiness, reflection: false }));
    expect((await createClient(Health, transport).check({ service: '' })).status).toBe(ServingStatus.SERVING);
    const reflection = createClient(ServerReflection, transport);
    const err = await (async () => {
      for await (const _ of reflection.serverReflectionInfo((async function* () {})())) void _;
    })().catch((e: unknown) => ConnectError.from(e));
    expect((err as ConnectError).code).toBe(Code.Unimplemented);
  });
});
