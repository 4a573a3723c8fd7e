import pg from 'pg';
import type { DependencyProbe } from '../../ports/health/dependency-probe.port.ts';

/**
 * Probes Postgres over a connection of its own (`select 1`), not one from the
 * pool: a full pool is not an outage, while a process that can no longer open
 * a connection (Postgres down, or out of file descriptors) is.
 */
export class PostgresDependencyProbe implements DependencyProbe {
  readonly name = 'postgres';
  readonly #url: string;
  readonly #timeoutMs: number;

  constructor(url: string, timeoutMs: number) {
    this.#url = url;
    this.#timeoutMs = timeoutMs;
  }

  async probe(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: this.#timeoutMs, query_timeout: this.#timeoutMs });
    // A connection that dies after the answer must not surface as an unhandled 'error'.
    client.on('error', () => undefined);
    try {
      await client.connect();
      await client.query('select 1');
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
