// Which Postgres server a test run uses. test/support/global-setup.ts asks once per run and hands the answer to
// every test file as TEST_POSTGRES_URL (each file then makes databases of its own on that server).
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import { embeddedPostgresBinaries, useEmbeddedPostgres } from '../../src/adapters/postgres/embedded-postgres.ts';
import { redactUrl } from '../../src/composition/startup.ts';

/** The machine's Postgres that the tests use when TEST_POSTGRES_URL is unset and it answers. */
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432';

/** The server of a test run. */
export interface TestPostgres {
  /** Server URL without a database name (postgres://user[:password]@host:port). */
  readonly url: string;
  /** One line for the run's output: which server, and why that one. */
  readonly description: string;
  /** Ends this run's use of it: an embedded server is stopped unless another run still uses it. */
  stop(): Promise<void>;
}

/** Whether a Postgres server answers at serverUrl (its `postgres` database): undefined when it does, else why not. */
export async function probePostgres(serverUrl: string, timeoutMs = 3000): Promise<string | undefined> {
  const client = new pg.Client({ connectionString: `${serverUrl.replace(/\/+$/, '')}/postgres`, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return undefined;
  } catch (err) {
    const { code, message } = err as { code?: string; message: string };
    return code && !message.includes(code) ? `${code}: ${message}` : message;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The run's Postgres: the server TEST_POSTGRES_URL names (it must answer); without it, the machine's at
 * {@link DEFAULT_TEST_POSTGRES_URL} when that answers; otherwise (and always with TEST_POSTGRES_URL=embedded)
 * one embedded Postgres for the run, from the embedded-postgres package, in {@link embeddedTestDir}.
 * @throws Error saying what to do when TEST_POSTGRES_URL names a server that does not answer.
 */
export async function resolveTestPostgres(env: NodeJS.ProcessEnv = process.env, onProgress: (line: string) => void = () => undefined): Promise<TestPostgres> {
  const asked = env.TEST_POSTGRES_URL?.trim().replace(/\/+$/, '');
  const nothingToStop = async () => undefined;
  if (asked && asked !== 'embedded') {
    const failure = await probePostgres(asked);
    if (failure) {
      throw new Error(
        `TEST_POSTGRES_URL=${redactUrl(asked)} does not answer (${failure}). Start that Postgres, or unset TEST_POSTGRES_URL: ` +
          `the tests then use ${DEFAULT_TEST_POSTGRES_URL} when it answers, and otherwise an embedded Postgres of their own (TEST_POSTGRES_URL=embedded always does).`,
      );
    }
    return { url: asked, description: `Postgres at ${redactUrl(asked)} (TEST_POSTGRES_URL)`, stop: nothingToStop };
  }
  let why = 'TEST_POSTGRES_URL=embedded';
  if (!asked) {
    const failure = await probePostgres(DEFAULT_TEST_POSTGRES_URL);
    if (!failure) return { url: DEFAULT_TEST_POSTGRES_URL, description: `Postgres at ${DEFAULT_TEST_POSTGRES_URL} (the default; set TEST_POSTGRES_URL for another)`, stop: nothingToStop };
    why = `none answered at ${DEFAULT_TEST_POSTGRES_URL}: ${failure}`;
  }
  const dir = embeddedTestDir();
  const began = performance.now();
  const server = await useEmbeddedPostgres({ dir, systemUser: env.EMBEDDED_POSTGRES_USER?.trim() || 'checkout-pg', onProgress });
  const ms = Math.round(performance.now() - began);
  return {
    url: server.url('').replace(/\/$/, ''),
    description: `embedded Postgres ${server.version} on 127.0.0.1:${server.port}, ${server.how === 'joined' ? 'shared with a run already using it' : `${server.how} in ${ms} ms`}, in ${dir} (${why})`,
    async stop() {
      await server.release();
    },
  };
}

/**
 * The embedded cluster of the test runs: one per user and Postgres version in the temporary directory (which the
 * server's own user can reach when the run is root's, whatever the checkout's path), reused across runs and shared
 * by runs at the same time, each on databases of its own.
 */
export function embeddedTestDir(): string {
  return path.join(tmpdir(), `checkout-test-postgres-${embeddedPostgresBinaries().version}-${userInfo().username}`);
}
