import knexFactory, { type Knex } from 'knex';
import pg from 'pg';
import { ConflictError, ServiceUnavailableError } from '../../ports/errors.ts';
import { migrationSource, migrationSourceFor, type MigrationContext } from './migrations/index.ts';

// int8 (bigint) arrives as a string; mappers turn it into a BigInt, never a float.
pg.types.setTypeParser(pg.types.builtins.INT8, (value: string) => value);

/** Options for {@link createDatabase}. */
export interface DatabaseOptions {
  readonly url: string;
  readonly poolMax?: number;
  /** How long a request waits for a connection before answering 503. */
  readonly acquireTimeoutMs?: number;
  /**
   * Whether the hot path may use named (server-side, per-connection) prepared statements; true when absent.
   * False behind a pooler in transaction mode that cannot carry them (PgBouncer before 1.21, or with
   * max_prepared_statements = 0): every query is then sent as an unnamed extended-protocol statement.
   */
  readonly namedStatements?: boolean;
}

/** Creates the Knex instance (pg driver) the Postgres adapters share. */
export function createDatabase(options: DatabaseOptions): Knex {
  const knex = knexFactory({
    client: 'pg',
    connection: { connectionString: options.url, connectionTimeoutMillis: options.acquireTimeoutMs ?? 5000 },
    pool: { min: 0, max: options.poolMax ?? 20 },
    acquireConnectionTimeout: options.acquireTimeoutMs ?? 5000,
    migrations: { migrationSource, tableName: 'knex_migrations' },
    // Connection failures reach callers as ServiceUnavailableError; knex's own console output would only duplicate them.
    log: { warn: () => undefined, error: () => undefined, deprecate: () => undefined, debug: () => undefined },
  });
  if (options.namedStatements === false) UNNAMED_ONLY.add(knex);
  return knex;
}

const UNNAMED_ONLY = new WeakSet<Knex>();

/** Whether queries on this database may be named prepared statements (see {@link DatabaseOptions.namedStatements}). */
export function namedStatementsAllowed(knex: Knex): boolean {
  return !UNNAMED_ONLY.has(knex);
}

/** Reverts the last migration applied; answers its name (none when nothing is applied). */
export async function migrateDown(knex: Knex, context: MigrationContext = {}): Promise<string[]> {
  const [, reverted] = (await knex.migrate.down({ migrationSource: migrationSourceFor(context) })) as [number, string[]];
  return reverted;
}

/** Runs pending migrations; answers the names of those applied. */
export async function migrateLatest(knex: Knex, context: MigrationContext = {}): Promise<string[]> {
  const [, applied] = (await knex.migrate.latest({ migrationSource: migrationSourceFor(context) })) as [number, string[]];
  return applied;
}

// EMFILE and ENFILE: this process (or the machine) is out of file descriptors, so no connection can be
// opened. That is an outage to report as 503, not a fault in the request.
const UNAVAILABLE_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', 'EPIPE', 'EAI_AGAIN', 'EMFILE', 'ENFILE']);

/** True when err says Postgres cannot be reached or is refusing work, not that the query was wrong. */
export function isUnavailable(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'KnexTimeoutError') return true;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (UNAVAILABLE_ERRNOS.has(code)) return true;
    // SQLSTATE classes 08 (connection exception), 53 (insufficient resources), 57P (operator intervention).
    if (/^(08|53|57P)/.test(code)) return true;
  }
  return /Connection terminated|connection is closed|Client has encountered a connection error/i.test(err.message);
}

/** What each unique constraint means when a request loses the race for it. */
const CONFLICTS: Readonly<Record<string, string>> = {
  payment_attempts_one_success: 'The order has been paid by another payment.',
  payments_one_success: 'The order has been paid by another payment.',
  payment_attempts_submission: 'This payment submission is already being processed.',
  payments_submission: 'This payment submission is already being processed.',
  events_subject_sequence_unique: 'The subject of this event changed.',
};

/**
 * Runs a database call, turning the store's errors into the ports' own:
 * "cannot reach Postgres" becomes ServiceUnavailableError, a unique
 * violation (a race another request won), a deadlock or a serialization
 * failure ConflictError; any other error (a fault of ours) goes through.
 * @throws ServiceUnavailableError when Postgres is unreachable.
 * @throws ConflictError when a unique constraint refused the write, or Postgres chose this transaction as a deadlock's victim.
 */
export async function translateErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isUnavailable(err)) throw new ServiceUnavailableError('Postgres is unavailable', { cause: err });
    const code = (err as { code?: unknown }).code;
    // A deadlock or a serialization failure: Postgres rolled this transaction back in favour of another.
    if (code === '40P01' || code === '40001') {
      throw new ConflictError('The change met another one made at the same time and was rolled back.', { cause: err });
    }
    if (code === '23505') {
      const constraint = String((err as { constraint?: unknown }).constraint ?? '');
      throw new ConflictError(CONFLICTS[constraint] ?? 'The change conflicts with one made at the same time.', { cause: err });
    }
    throw err;
  }
}

/** True when Postgres rolled the transaction back as a deadlock's victim or for a serialization failure: retrying it may succeed. */
function isRetryable(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === '40P01' || code === '40001';
}

/**
 * Runs a transaction of its own again when Postgres picked it as a deadlock's victim, up to
 * `attempts` times: for work with no effect outside the database, whose rows another statement
 * may lock in another order (a dispatcher claiming the deliveries an endpoint deletion fails).
 */
export async function retryingDeadlocks<T>(fn: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err)) throw err;
    }
  }
}
