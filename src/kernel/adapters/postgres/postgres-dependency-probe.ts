import pg from 'pg';
import type { DependencyProbe } from '../../ports/dependency-probe.port.ts';

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

  probe(): Promise<void> {
    return onOwnConnection(this.#url, this.#timeoutMs, async (client) => {
      await client.query('select 1');
    });
  }
}

/**
 * Runs `work` on a connection of its own, opened and closed for it, each step bounded by `timeoutMs`:
 * what the probes share (a full pool is not an outage).
 */
export async function onOwnConnection(url: string, timeoutMs: number, work: (client: pg.Client) => Promise<void>): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  // A connection that dies after the answer must not surface as an unhandled 'error'.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}
