// GET /readyz against the real service, with Postgres behind a relay the test cuts and restores
// (the machine's Postgres keeps running), and the Postgres adapter in a process out of file
// descriptors: Postgres that cannot be reached is 503 and unready, never 500.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { orderBody } from './support/order-fixtures.ts';
import { createTestDatabase, TEST_POSTGRES_URL, type TestDatabase } from './support/database.ts';
import { CuttablePostgres } from './support/cuttable-postgres.ts';
import { waitFor } from './support/wait.ts';
import { httpRequest } from './support/raw-http.ts';
import { deleteStream, freePort, uniqueStream } from './support/nats-server.ts';
import { harnessEventsMode, harnessNatsUrl } from './support/requirements.ts';
import { loadConfig } from '../src/composition/config.ts';
import { startService, type RunningService } from '../server/service.ts';
import { startHarness } from './support/webhooks.ts';

describe('GET /readyz', () => {
  const relay = new CuttablePostgres();
  const stream = uniqueStream();
  let db: TestDatabase;
  let service: RunningService;
  let base: string;

  beforeAll(async () => {
    db = await createTestDatabase({ migrate: false });
    await relay.up();
    service = await startService({
      ...loadConfig({ LOG_LEVEL: 'silent', RUN_DISPATCHER: 'false' }),
      databaseUrl: relay.url(db.url),
      databasePoolMax: 5,
      // The run's NATS when it has one, else events through Postgres (whose own case is the next suite).
      natsUrl: harnessNatsUrl(),
      natsStream: stream.stream,
      natsSubjectPrefix: stream.subjectPrefix,
      port: await freePort(),
      host: '127.0.0.1',
    });
    base = `http://127.0.0.1:${service.port}`;
  });
  afterAll(async () => {
    await relay.up().catch(() => undefined);
    await service?.close();
    await relay.down();
    await db?.drop();
    await deleteStream(stream.stream);
  });

  const readyz = async () => {
    const res = await httpRequest(Number(new URL(base).port), 'GET', '/readyz');
    return { status: res.status, json: JSON.parse(res.body) as Record<string, unknown> };
  };

  it('is ready while Postgres answers, unready (503, no 500 from the API) while it cannot be reached, and ready again when it is back', async () => {
    const port = service.port;
    const key = service.firstSandbox!.test_secret_key;
    const ready = await waitFor('readiness', readyz, (r) => r.status === 200);
    expect(ready.json).toMatchObject({
      ready: true,
      checks: {
        postgres: { status: 'ok', required: true },
        migrations: { status: 'ok', required: true },
        ...(harnessEventsMode() === 'nats' ? { nats: { required: false } } : {}),
        events: { mode: harnessEventsMode(), required: false },
      },
    });
    // /healthz is liveness only.
    expect((await httpRequest(port, 'GET', '/healthz')).status).toBe(200);

    await relay.down();
    const unready = await waitFor('unreadiness', readyz, (r) => r.status === 503);
    expect(unready.json).toMatchObject({
      ready: false,
      checks: { postgres: { status: 'unavailable', required: true } },
      error: { type: 'api_error', code: 'service_unavailable', message: expect.stringContaining('postgres'), request_id: expect.stringMatching(/^req_/) },
    });
    expect((await httpRequest(port, 'GET', '/healthz')).status).toBe(200);
    const refused = await httpRequest(port, 'POST', '/v1/orders', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, JSON.stringify(orderBody()));
    expect(refused.status).toBe(503);
    expect(JSON.parse(refused.body).error).toMatchObject({ code: 'service_unavailable' });

    await relay.up();
    await waitFor('readiness after Postgres is back', readyz, (r) => r.status === 200);
    const created = await httpRequest(port, 'POST', '/v1/orders', { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, JSON.stringify(orderBody()));
    expect(created.status).toBe(201);
  });
});

// ---------------------------------------------------------------------------------------------

describe('without NATS_URL', () => {
  it('says at start that events go through Postgres on a single node, and /readyz reports the events\' mode and no NATS', async () => {
    const lines: string[] = [];
    const h = await startHarness({ events: 'postgres-outbox', env: { LOG_LEVEL: 'info', SERVE_WORKERS: 'none' }, logDestination: { write: (line) => void lines.push(line) } });
    try {
      const startLine = lines.map((line) => JSON.parse(line) as { msg: string }).find((line) => line.msg.startsWith('Checkout service listening on'));
      expect(startLine?.msg).toMatch(/; events through Postgres, no NATS: single node \(set NATS_URL to run on NATS JetStream\)$/);
      const res = await httpRequest(h.service.port, 'GET', '/readyz');
      expect(res.status).toBe(200);
      const { checks } = JSON.parse(res.body) as { checks: Record<string, unknown> };
      expect(checks.events).toEqual({ mode: 'postgres-outbox', status: 'ok', required: false });
      expect(checks).not.toHaveProperty('nats');
    } finally {
      await h.close();
    }
  });
});

// ---------------------------------------------------------------------------------------------

describe('Postgres errors when the process is out of file descriptors', () => {
  it('are "unavailable" (503), not internal errors (500)', async () => {
    // A child with a low descriptor limit fills it up, then asks Postgres through the adapter.
    const script = `
      import { openSync } from 'node:fs';
      import { createDatabase, translateErrors } from './src/kernel/adapters/postgres/database.ts';
      const knex = createDatabase({ url: process.env.DB_URL, poolMax: 1, acquireTimeoutMs: 2000 });
      const held = [];
      try { for (;;) held.push(openSync('/dev/null', 'r')); } catch (err) { if (err.code !== 'EMFILE') throw err; }
      try {
        await translateErrors(() => knex.raw('select 1'));
        console.log(JSON.stringify({ outcome: 'answered' }));
      } catch (err) {
        console.log(JSON.stringify({ outcome: err.name, cause: err.cause?.code ?? err.cause?.message }));
      }
      process.exit(0);
    `;
    const { stdout } = await promisify(execFile)('sh', ['-c', `ulimit -n 64 && exec "${process.execPath}" --input-type=module -e "$SCRIPT"`], {
      cwd: process.cwd(),
      env: { ...process.env, SCRIPT: script, DB_URL: `${TEST_POSTGRES_URL}/postgres` },
      timeout: 30_000,
    });
    expect(JSON.parse(stdout.trim().split('\n').pop()!)).toEqual({ outcome: 'ServiceUnavailableError', cause: 'EMFILE' });
  });
});
