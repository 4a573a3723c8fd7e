// Which Postgres and NATS a test run uses, decided once per run (test/support/global-setup.ts) before any suite
// starts, and handed to every test file as TEST_POSTGRES_URL and TEST_NATS_URL.
//   Postgres: the server TEST_POSTGRES_URL names (it must answer); unset, the machine's at DEFAULT_TEST_POSTGRES_URL
//             when it answers; otherwise (and always with TEST_POSTGRES_URL=embedded) one embedded Postgres for the run.
//   NATS:     the server TEST_NATS_URL names (it must answer, with JetStream); unset, the machine's at
//             DEFAULT_TEST_NATS_URL when it answers; otherwise none: the harness's services send their events through
//             Postgres, and the suites that need JetStream itself are skipped and named (requirements.ts).
// A server a variable names that does not answer stops the run with one message (TestServersMissing) saying what
// is missing and how to point the tests elsewhere, instead of a bare ECONNREFUSED from every suite.
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { connect as connectNats } from 'nats';
import pg from 'pg';
import { embeddedPostgresBinaries, useEmbeddedPostgres } from '../../src/kernel/adapters/postgres/embedded-postgres.ts';

/** The machine's Postgres that the tests use when TEST_POSTGRES_URL is unset and it answers (a server URL, no database). */
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432';
/** The machine's NATS that the tests use when TEST_NATS_URL is unset and it answers. */
export const DEFAULT_TEST_NATS_URL = 'nats://127.0.0.1:4222';

/** A server a variable points the tests at that did not answer as they need it. */
export interface MissingServer {
  /** What it is, e.g. "Postgres". */
  readonly what: string;
  /** The variable that points the tests at another one. */
  readonly variable: string;
  readonly url: string;
  /** Why it cannot be used: the error, in a few words. */
  readonly problem: string;
}

/** Thrown by {@link resolveTestPostgres} and {@link resolveTestNats}: the servers that are missing, and one message that says how to fix it. */
export class TestServersMissing extends Error {
  readonly missing: readonly MissingServer[];
  constructor(missing: readonly MissingServer[]) {
    super(missingServersMessage(missing));
    this.name = 'TestServersMissing';
    this.missing = missing;
  }
}

/** The one message a run whose named servers do not answer ends with. */
export function missingServersMessage(missing: readonly MissingServer[]): string {
  const lines = missing.map((m) => `  - ${m.what} at ${redact(m.url)} (${m.variable}): ${m.problem}`);
  return [
    'The integration suites were pointed at servers that this run cannot use:',
    ...lines,
    'Start them, point the tests at servers that run, or unset the variable:',
    `  TEST_POSTGRES_URL=postgres://USER@HOST:PORT (the user needs CREATEDB); unset: ${DEFAULT_TEST_POSTGRES_URL} when it answers,`,
    '    otherwise an embedded Postgres of the run\'s own (TEST_POSTGRES_URL=embedded always)',
    `  TEST_NATS_URL=nats://HOST:PORT (JetStream on: nats-server -js); unset: ${DEFAULT_TEST_NATS_URL} when it answers,`,
    '    otherwise none (events through Postgres; the suites that need JetStream are skipped and named)',
    'No suite was run.',
  ].join('\n');
}

/** A URL as it may be printed: without its password. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.href.replace(/\/$/, '');
  } catch {
    return url;
  }
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describe(err.errors[0]);
  if (err instanceof Error) return err.message || (err as { code?: string }).code || err.name;
  return String(err);
}

const PROBE_TIMEOUT_MS = 5000;

// ---------------------------------------------------------------- Postgres

/** The Postgres server of a test run. */
export interface TestPostgres {
  /** Server URL without a database name (postgres://user[:password]@host:port; the embedded one's host is its socket's directory, percent-encoded). */
  readonly url: string;
  /** One line for the run's output: which server, and why that one. */
  readonly description: string;
  /** Ends this run's use of it: an embedded server is stopped unless another run still uses it. */
  stop(): Promise<void>;
}

/**
 * Why the Postgres server at serverUrl cannot be used by the suites, or undefined when it answers a query as a user
 * that may create databases (every suite makes databases of its own).
 */
export async function probePostgres(serverUrl: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  let database: string;
  try {
    database = `${serverUrl.replace(/\/+$/, '')}/postgres`;
    new URL(database);
  } catch {
    return 'not a URL of the form postgres://USER@HOST:PORT';
  }
  const client = new pg.Client({ connectionString: database, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // An error event after connect failed would otherwise be unhandled.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ may: boolean }>('SELECT rolcreatedb OR rolsuper AS may FROM pg_roles WHERE rolname = current_user');
    return rows[0]?.may ? undefined : 'its user may not create databases (needs CREATEDB)';
  } catch (err) {
    return describe(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The run's Postgres: the server TEST_POSTGRES_URL names (it must answer); without it, the machine's at
 * {@link DEFAULT_TEST_POSTGRES_URL} when that answers; otherwise (and always with TEST_POSTGRES_URL=embedded)
 * one embedded Postgres for the run, from the embedded-postgres package, in {@link embeddedTestDir}.
 * (`machineUrl` stands in for the machine's default in the harness's own test.)
 * @throws TestServersMissing when TEST_POSTGRES_URL names a server that does not answer.
 */
export async function resolveTestPostgres(env: NodeJS.ProcessEnv = process.env, onProgress: (line: string) => void = () => undefined, machineUrl = DEFAULT_TEST_POSTGRES_URL): Promise<TestPostgres> {
  const asked = env.TEST_POSTGRES_URL?.trim().replace(/\/+$/, '');
  const nothingToStop = async () => undefined;
  if (asked && asked !== 'embedded') {
    const failure = await probePostgres(asked);
    if (failure) throw new TestServersMissing([{ what: 'Postgres', variable: 'TEST_POSTGRES_URL', url: asked, problem: failure }]);
    return { url: asked, description: `Postgres at ${redact(asked)} (TEST_POSTGRES_URL)`, stop: nothingToStop };
  }
  let why = 'TEST_POSTGRES_URL=embedded';
  if (!asked) {
    const failure = await probePostgres(machineUrl);
    if (!failure) return { url: machineUrl, description: `Postgres at ${machineUrl} (the machine's; set TEST_POSTGRES_URL for another)`, stop: nothingToStop };
    why = `none answered at ${machineUrl}: ${failure}`;
  }
  const dir = embeddedTestDir();
  const began = performance.now();
  const server = await useEmbeddedPostgres({ dir, systemUser: env.EMBEDDED_POSTGRES_USER?.trim() || 'checkout-pg', onProgress });
  const ms = Math.round(performance.now() - began);
  return {
    url: server.url('').replace(/\/$/, ''),
    description: `embedded Postgres ${server.version} on the unix socket ${path.join(server.socketDir, `.s.PGSQL.${server.port}`)}, ${server.how === 'joined' ? 'shared with a run already using it' : `${server.how} in ${ms} ms`}, in ${dir} (${why})`,
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

// ---------------------------------------------------------------- NATS

/** Why the NATS at url cannot be used (it must answer, with JetStream on), or undefined when it can. */
export async function probeNats(url: string, timeoutMs = PROBE_TIMEOUT_MS): Promise<string | undefined> {
  let nc;
  try {
    nc = await connectNats({ servers: url.split(','), timeout: timeoutMs, reconnect: false });
  } catch (err) {
    // The client's error says only its code.
    return describe(err) === 'CONNECTION_REFUSED' ? 'connection refused' : describe(err);
  }
  try {
    const jsm = await nc.jetstreamManager({ timeout: timeoutMs });
    await jsm.getAccountInfo();
    return undefined;
  } catch (err) {
    return `JetStream does not answer (${describe(err)}); start nats-server with -js`;
  } finally {
    await nc.close().catch(() => undefined);
  }
}

/** The run's NATS: its URL, or why there is none (the suites that need it are skipped with that reason). */
export type TestNats = { readonly url: string; readonly missing?: undefined; readonly description: string } | { readonly url?: undefined; readonly missing: string; readonly description: string };

/**
 * The run's NATS: the server TEST_NATS_URL names (it must answer, with JetStream); without it, the machine's at
 * {@link DEFAULT_TEST_NATS_URL} when that answers, otherwise none, with the reason. (`machineUrl` stands in for the
 * machine's default in the harness's own test.)
 * @throws TestServersMissing when TEST_NATS_URL names a server that does not answer.
 */
export async function resolveTestNats(env: NodeJS.ProcessEnv = process.env, machineUrl = DEFAULT_TEST_NATS_URL): Promise<TestNats> {
  const asked = env.TEST_NATS_URL?.trim();
  const url = asked || machineUrl;
  const failure = await probeNats(url);
  if (failure === undefined) return { url, description: `NATS at ${redact(url)} (${asked ? 'TEST_NATS_URL' : 'the machine\'s; set TEST_NATS_URL for another'})` };
  if (asked) throw new TestServersMissing([{ what: 'NATS', variable: 'TEST_NATS_URL', url, problem: failure }]);
  const missing = `no NATS at ${url}`;
  return {
    missing,
    description: `${missing} (${failure}): the harness's services send their events through Postgres, and the suites that need JetStream are skipped (start nats-server -js, or set TEST_NATS_URL)`,
  };
}

/**
 * The servers of a run, both probed at once.
 * @throws TestServersMissing naming every server a variable names that does not answer (nothing was started then).
 */
export async function resolveTestServers(env: NodeJS.ProcessEnv = process.env, onProgress?: (line: string) => void): Promise<{ postgres: TestPostgres; nats: TestNats }> {
  const [postgres, nats] = await Promise.allSettled([resolveTestPostgres(env, onProgress), resolveTestNats(env)]);
  const missing = [postgres, nats].flatMap((r) => (r.status === 'rejected' && r.reason instanceof TestServersMissing ? r.reason.missing : []));
  if (missing.length > 0) {
    if (postgres.status === 'fulfilled') await postgres.value.stop();
    throw new TestServersMissing(missing);
  }
  if (postgres.status === 'rejected') throw postgres.reason;
  if (nats.status === 'rejected') {
    await postgres.value.stop();
    throw nats.reason;
  }
  return { postgres: postgres.value, nats: nats.value };
}
