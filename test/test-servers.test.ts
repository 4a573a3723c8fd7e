// The harness's own choice of its servers (test/support/global-setup.ts, test-servers.ts): a run whose
// TEST_POSTGRES_URL or TEST_NATS_URL names a server that does not answer stops before any suite with one
// message that names what is missing and the variables that point the tests elsewhere, instead of a bare
// ECONNREFUSED from every suite; with nothing named, the machine's servers when they answer, else an embedded
// Postgres of the run's own and no NATS (the suites that need JetStream are then skipped, and named).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { TEST_POSTGRES_URL } from './support/database.ts';
import { freePort, MACHINE_NATS_URL } from './support/nats-server.ts';
import { harnessNatsUrl, requires } from './support/requirements.ts';
import { embeddedTestDir, resolveTestNats, resolveTestPostgres, TestServersMissing } from './support/test-servers.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const VITEST = path.join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
// A suite that needs Postgres: without the check it fails on its own connection error.
const SUITE = 'test/expire-order.test.ts';

/** Runs vitest on one suite with env on top of this process's (vitest's own worker variables removed). */
async function runVitest(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('VITEST') && name !== 'NODE_OPTIONS' && name !== 'TEST'));
  const child = spawn(process.execPath, [VITEST, 'run', SUITE, '--reporter', 'default', '--color=false'], {
    cwd: REPO,
    env: { ...base, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

describe('a run pointed at servers that do not answer', () => {
  it('stops before any suite with one message naming the Postgres TEST_POSTGRES_URL names and what to set', async () => {
    const closed = await freePort();
    // The run's NATS, if it has one (unset otherwise: a NATS that is not there is no reason to stop).
    const nats = harnessNatsUrl();
    const { code, output } = await runVitest({ TEST_POSTGRES_URL: `postgres://postgres@127.0.0.1:${closed}`, ...(nats ? { TEST_NATS_URL: nats } : {}) });
    expect(code).toBe(1);
    expect(output).toContain('The integration suites were pointed at servers that this run cannot use:');
    expect(output).toContain(`- Postgres at postgres://postgres@127.0.0.1:${closed} (TEST_POSTGRES_URL): connect ECONNREFUSED 127.0.0.1:${closed}`);
    expect(output).toContain('TEST_POSTGRES_URL=postgres://USER@HOST:PORT');
    expect(output).toContain('otherwise an embedded Postgres of the run\'s own');
    expect(output).toContain('TEST_NATS_URL=nats://HOST:PORT');
    expect(output).not.toContain('- NATS at');
    // Said once, and no suite ran to fail on its own.
    expect(output.split('ECONNREFUSED').length - 1).toBe(1);
    expect(output).not.toContain('expire-order');
    expect(output).not.toMatch(/Test Files|FAIL/);
  });

  it('names both when neither the Postgres nor the NATS named answers', async () => {
    const [pgPort, natsPort] = [await freePort(), await freePort()];
    const { code, output } = await runVitest({ TEST_POSTGRES_URL: `postgres://postgres@127.0.0.1:${pgPort}`, TEST_NATS_URL: `nats://127.0.0.1:${natsPort}` });
    expect(code).toBe(1);
    expect(output).toContain(`- Postgres at postgres://postgres@127.0.0.1:${pgPort} (TEST_POSTGRES_URL): connect ECONNREFUSED`);
    expect(output).toContain(`- NATS at nats://127.0.0.1:${natsPort} (TEST_NATS_URL): connection refused`);
    expect(output.match(/The integration suites were pointed at/g)).toHaveLength(1);
    expect(output).not.toMatch(/Test Files|FAIL/);
  });
});

describe('resolveTestPostgres and resolveTestNats', () => {
  it('answer the server a variable names when it answers', async () => {
    expect(await resolveTestPostgres({ TEST_POSTGRES_URL: `${TEST_POSTGRES_URL}/` })).toMatchObject({ url: TEST_POSTGRES_URL.replace(/\/+$/, ''), description: expect.stringContaining('(TEST_POSTGRES_URL)') });
  });

  it('answer the NATS TEST_NATS_URL names when it answers', requires('nats'), async () => {
    expect(await resolveTestNats({ TEST_NATS_URL: MACHINE_NATS_URL })).toMatchObject({ url: MACHINE_NATS_URL, description: expect.stringContaining('(TEST_NATS_URL)') });
    expect((await resolveTestNats({ TEST_NATS_URL: MACHINE_NATS_URL })).missing).toBeUndefined();
  });

  it('throw TestServersMissing, with the password hidden, when a named server does not answer', async () => {
    const closed = await freePort();
    const err = await resolveTestPostgres({ TEST_POSTGRES_URL: `postgres://ci:s3cret@127.0.0.1:${closed}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TestServersMissing);
    expect((err as Error).message).toContain(`Postgres at postgres://ci:***@127.0.0.1:${closed}`);
    expect((err as Error).message).not.toContain('s3cret');
    const nats = await resolveTestNats({ TEST_NATS_URL: `nats://127.0.0.1:${closed}` }).catch((e: unknown) => e);
    expect(nats).toBeInstanceOf(TestServersMissing);
    expect((nats as TestServersMissing).missing).toEqual([{ what: 'NATS', variable: 'TEST_NATS_URL', url: `nats://127.0.0.1:${closed}`, problem: 'connection refused' }]);
  });

  it('with no TEST_NATS_URL and no NATS where the machine\'s would be, answer none and why: the run goes on without it', async () => {
    const closed = await freePort();
    const nats = await resolveTestNats({}, `nats://127.0.0.1:${closed}`);
    expect(nats).toEqual({ missing: `no NATS at nats://127.0.0.1:${closed}`, description: expect.stringContaining('the suites that need JetStream are skipped') });
  });

  it('with no TEST_POSTGRES_URL and no Postgres where the machine\'s would be, start the embedded Postgres of the test runs, which answers', { timeout: 180_000 }, async () => {
    const closed = await freePort();
    const server = await resolveTestPostgres({}, undefined, `postgres://postgres@127.0.0.1:${closed}`);
    try {
      expect(server.description).toMatch(new RegExp(`^embedded Postgres \\d+\\.\\d+ on the unix socket \\S+/socket/\\.s\\.PGSQL\\.\\d+, .* in ${embeddedTestDir().replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} \\(none answered at postgres://postgres@127\\.0\\.0\\.1:${closed}: connect ECONNREFUSED`));
      expect(server.url).toMatch(/^postgres:\/\/postgres:[^@]+@%2F\S+%2Fsocket:\d+$/);
      const client = new pg.Client({ connectionString: `${server.url}/postgres` });
      await client.connect();
      try {
        expect((await client.query<{ may: boolean }>('SELECT rolcreatedb OR rolsuper AS may FROM pg_roles WHERE rolname = current_user')).rows[0]!.may).toBe(true);
      } finally {
        await client.end();
      }
    } finally {
      // Stopped unless another run (or this one, when it runs on the embedded Postgres) still uses it.
      await server.stop();
    }
  });
});
