import pg from 'pg';
import type { DependencyProbe } from '../../ports/health/dependency-probe.port.ts';
import { MIGRATIONS } from './migrations/index.ts';

/** The knex migrations table (as in database.ts). */
const MIGRATIONS_TABLE = 'knex_migrations';

/**
 * Probes that the database is at this build's schema: the knex migrations
 * table holds the latest migration of migrations/index.ts. Over a connection
 * of its own, like {@link PostgresDependencyProbe}'s, so a full pool does not
 * count as a fault.
 */
export class PostgresMigrationsProbe implements DependencyProbe {
  readonly name = 'migrations';
  readonly #url: string;
  readonly #timeoutMs: number;
  readonly #latest = MIGRATIONS.at(-1)![0];

  constructor(url: string, timeoutMs: number) {
    this.#url = url;
    this.#timeoutMs = timeoutMs;
  }

  async probe(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: this.#timeoutMs, query_timeout: this.#timeoutMs });
    client.on('error', () => undefined);
    try {
      await client.connect();
      const table = await client.query<{ present: boolean }>('select to_regclass($1) is not null as present', [MIGRATIONS_TABLE]);
      if (!table.rows[0]?.present) throw new Error('no migrations applied (run `checkout migrate`)');
      const latest = await client.query(`select 1 from ${MIGRATIONS_TABLE} where name = $1`, [this.#latest]);
      if (latest.rowCount === 0) throw new Error(`migration ${this.#latest} not applied (run \`checkout migrate\`)`);
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
