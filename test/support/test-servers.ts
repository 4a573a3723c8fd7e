// Which Postgres and NATS the suites use, decided once per run (test/support/global-setup.ts) before any
// suite starts. Today each is the server its variable names, or the machine's default, if it answers;
// the place to start one of the harness's own when none answers is here, behind the same functions.
import { connect as connectNats } from 'nats';
import pg from 'pg';

/** The Postgres server named by TEST_POSTGRES_URL, or the default one (a server URL, no database). */
export const DEFAULT_TEST_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432';
/** The NATS server named by TEST_NATS_URL, or the default one. */
export const DEFAULT_TEST_NATS_URL = 'nats://127.0.0.1:4222';

/** A server the suites need that did not answer as they need it. */
export interface MissingServer {
  /** What it is, e.g. "Postgres". */
  readonly what: string;
  /** The variable that points the tests at another one. */
  readonly variable: string;
  readonly url: string;
  /** Why it cannot be used: the error, in a few words. */
  readonly problem: string;
}

/** Thrown by {@link resolveTestServers}: the servers that are missing, and one message that says how to fix it. */
export class TestServersMissing extends Error {
  readonly missing: readonly MissingServer[];
  constructor(missing: readonly MissingServer[]) {
    super(missingServersMessage(missing));
    this.name = 'TestServersMissing';
    this.missing = missing;
  }
}

/** The one message a run without its servers ends with. */
export function missingServersMessage(missing: readonly MissingServer[]): string {
  const lines = missing.map((m) => `  - ${m.what} at ${redact(m.url)} (${m.variable}): ${m.problem}`);
  return [
    'The integration suites need a running Postgres and NATS with JetStream, and this run cannot use:',
    ...lines,
    'Start them (README.md, "Prerequisites"), or point the tests at servers that run:',
    `  TEST_POSTGRES_URL=postgres://USER@HOST:PORT (default ${DEFAULT_TEST_POSTGRES_URL}; the user needs CREATEDB)`,
    `  TEST_NATS_URL=nats://HOST:PORT (default ${DEFAULT_TEST_NATS_URL}; JetStream on: nats-server -js)`,
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

/**
 * The Postgres server URL the suites are to use: TEST_POSTGRES_URL or the default, once it answered a query
 * as a user that may create databases (every suite makes databases of its own).
 * @throws TestServersMissing when it does not.
 */
export async function resolveTestPostgres(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const url = env.TEST_POSTGRES_URL || DEFAULT_TEST_POSTGRES_URL;
  const missing = (problem: string) => new TestServersMissing([{ what: 'Postgres', variable: 'TEST_POSTGRES_URL', url, problem }]);
  let database: string;
  try {
    database = `${url.replace(/\/+$/, '')}/postgres`;
    new URL(database);
  } catch {
    throw missing('not a URL of the form postgres://USER@HOST:PORT');
  }
  const client = new pg.Client({ connectionString: database, connectionTimeoutMillis: PROBE_TIMEOUT_MS, query_timeout: PROBE_TIMEOUT_MS });
  // An error event after connect failed would otherwise be unhandled.
  client.on('error', () => undefined);
  try {
    await client.connect();
    const { rows } = await client.query<{ may: boolean }>('SELECT rolcreatedb OR rolsuper AS may FROM pg_roles WHERE rolname = current_user');
    if (!rows[0]?.may) throw missing('its user may not create databases (needs CREATEDB)');
  } catch (err) {
    if (err instanceof TestServersMissing) throw err;
    throw missing(describe(err));
  } finally {
    await client.end().catch(() => undefined);
  }
  return url.replace(/\/+$/, '');
}

/**
 * The NATS URL the suites are to use: TEST_NATS_URL or the default, once it answered with JetStream on.
 * @throws TestServersMissing when it does not.
 */
export async function resolveTestNats(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const url = env.TEST_NATS_URL || DEFAULT_TEST_NATS_URL;
  const missing = (problem: string) => new TestServersMissing([{ what: 'NATS', variable: 'TEST_NATS_URL', url, problem }]);
  let nc;
  try {
    nc = await connectNats({ servers: url.split(','), timeout: PROBE_TIMEOUT_MS, reconnect: false });
  } catch (err) {
    // The client's error says only its code.
    throw missing(describe(err) === 'CONNECTION_REFUSED' ? `connection refused` : describe(err));
  }
  try {
    const jsm = await nc.jetstreamManager({ timeout: PROBE_TIMEOUT_MS });
    await jsm.getAccountInfo();
  } catch (err) {
    throw missing(`JetStream does not answer (${describe(err)}); start nats-server with -js`);
  } finally {
    await nc.close().catch(() => undefined);
  }
  return url;
}

/** The servers the suites are to use. Probes both at once. @throws TestServersMissing naming every one missing. */
export async function resolveTestServers(env: NodeJS.ProcessEnv = process.env): Promise<{ postgresUrl: string; natsUrl: string }> {
  const [postgres, nats] = await Promise.allSettled([resolveTestPostgres(env), resolveTestNats(env)]);
  const missing = [postgres, nats].flatMap((r) => (r.status === 'rejected' ? (r.reason instanceof TestServersMissing ? r.reason.missing : [{ what: 'a server', variable: '', url: '', problem: describe(r.reason) }]) : []));
  if (missing.length > 0 || postgres.status === 'rejected' || nats.status === 'rejected') throw new TestServersMissing(missing);
  return { postgresUrl: postgres.value, natsUrl: nats.value };
}
