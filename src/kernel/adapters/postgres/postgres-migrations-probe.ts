import type { DependencyProbe } from '../../ports/dependency-probe.port.ts';
import { MIGRATIONS } from './migrations/index.ts';
import { onOwnConnection } from './postgres-dependency-probe.ts';

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

  probe(): Promise<void> {
    return onOwnConnection(this.#url, this.#timeoutMs, async (client) => {
      const table = await client.query<{ present: boolean }>('select to_regclass($1) is not null as present', [MIGRATIONS_TABLE]);
      if (!table.rows[0]?.present) throw new Error('no migrations applied (run `checkout migrate`)');
      const latest = await client.query(`select 1 from ${MIGRATIONS_TABLE} where name = $1`, [this.#latest]);
      if (latest.rowCount === 0) throw new Error(`migration ${this.#latest} not applied (run \`checkout migrate\`)`);
    });
  }
}
