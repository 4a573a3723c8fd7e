// The harness's own check of its servers (test/support/global-setup.ts, test-servers.ts): a run whose
// Postgres or NATS does not answer stops before any suite with one message that names what is missing
// and the variables that point the tests elsewhere, instead of a bare ECONNREFUSED from every suite.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TEST_POSTGRES_URL } from './support/database.ts';
import { freePort, MACHINE_NATS_URL } from './support/nats-server.ts';
import { resolveTestNats, resolveTestPostgres, TestServersMissing } from './support/test-servers.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const VITEST = path.join(REPO, 'node_modules', 'vitest', 'vitest.mjs');
// A suite that needs Postgres and NATS: without the check it fails on its own connection error.
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

describe('a run whose servers do not answer', () => {
  it('stops before any suite with one message naming the Postgres that did not answer and TEST_POSTGRES_URL', async () => {
    const closed = await freePort();
    const { code, output } = await runVitest({ TEST_POSTGRES_URL: `postgres://postgres@127.0.0.1:${closed}`, TEST_NATS_URL: MACHINE_NATS_URL });
    expect(code).toBe(1);
    expect(output).toContain('The integration suites need a running Postgres and NATS with JetStream, and this run cannot use:');
    expect(output).toContain(`- Postgres at postgres://postgres@127.0.0.1:${closed} (TEST_POSTGRES_URL): connect ECONNREFUSED 127.0.0.1:${closed}`);
    expect(output).toContain('TEST_POSTGRES_URL=postgres://USER@HOST:PORT');
    expect(output).toContain('TEST_NATS_URL=nats://HOST:PORT');
    expect(output).not.toContain('- NATS at');
    // Said once, and no suite ran to fail on its own.
    expect(output.split('ECONNREFUSED').length - 1).toBe(1);
    expect(output).not.toContain('expire-order');
    expect(output).not.toMatch(/Test Files|FAIL/);
  });

  it('names both when neither Postgres nor NATS answers', async () => {
    const [pgPort, natsPort] = [await freePort(), await freePort()];
    const { code, output } = await runVitest({ TEST_POSTGRES_URL: `postgres://postgres@127.0.0.1:${pgPort}`, TEST_NATS_URL: `nats://127.0.0.1:${natsPort}` });
    expect(code).toBe(1);
    expect(output).toContain(`- Postgres at postgres://postgres@127.0.0.1:${pgPort} (TEST_POSTGRES_URL): connect ECONNREFUSED`);
    expect(output).toContain(`- NATS at nats://127.0.0.1:${natsPort} (TEST_NATS_URL): connection refused`);
    expect(output.match(/The integration suites need/g)).toHaveLength(1);
    expect(output).not.toMatch(/Test Files|FAIL/);
  });
});

describe('resolveTestPostgres and resolveTestNats', () => {
  it('answer the URL to use when the server answers', async () => {
    expect(await resolveTestPostgres({ TEST_POSTGRES_URL: `${TEST_POSTGRES_URL}/` })).toBe(TEST_POSTGRES_URL.replace(/\/+$/, ''));
    expect(await resolveTestNats({ TEST_NATS_URL: MACHINE_NATS_URL })).toBe(MACHINE_NATS_URL);
  });

  it('throw TestServersMissing, with the password hidden, when it does not', async () => {
    const closed = await freePort();
    const err = await resolveTestPostgres({ TEST_POSTGRES_URL: `postgres://ci:s3cret@127.0.0.1:${closed}` }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TestServersMissing);
    expect((err as Error).message).toContain(`Postgres at postgres://ci:***@127.0.0.1:${closed}`);
    expect((err as Error).message).not.toContain('s3cret');
  });
});
