// Which Postgres a process uses, decided once at its start from the configuration: DATABASE_URL's, or without it
// the embedded Postgres. (How its events travel is decided beside it, in events.ts: NATS_URL → JetStream, without
// it the event stream in Postgres; so with neither set a process needs nothing but this checkout.)
import path from 'node:path';
import type { Config, ConnectedConfig } from './config.ts';
import { EmbeddedPostgresError, useEmbeddedPostgres } from '../kernel/adapters/postgres/embedded-postgres.ts';
import { redactUrl, StartupError } from './startup.ts';

/** The database name the service uses on the embedded Postgres. */
export const EMBEDDED_DATABASE = 'checkout';

/** The Postgres a process uses. */
export interface ChosenDatabase {
  readonly url: string;
  /** Whether it is the embedded Postgres (DATABASE_URL unset). */
  readonly embedded: boolean;
  /** For the start-up line: the URL with its password masked, or where the embedded server is and how it was reached. */
  readonly description: string;
  /** Done with it: the embedded server is stopped when this was the last process using it. */
  release(): Promise<void>;
}

/**
 * DATABASE_URL's Postgres, untouched; without DATABASE_URL, the embedded Postgres in EMBEDDED_POSTGRES_DIR:
 * joined when another process (`checkout serve`, a worker, a command) runs it, otherwise started here
 * (initdb on the first start) and stopped by release() unless another process still uses it.
 * @throws StartupError when the embedded Postgres cannot be started or joined.
 */
export async function chooseDatabase(config: Pick<Config, 'databaseUrl' | 'embeddedPostgres'>, onProgress?: (line: string) => void): Promise<ChosenDatabase> {
  if (config.databaseUrl !== undefined) {
    return { url: config.databaseUrl, embedded: false, description: redactUrl(config.databaseUrl), release: async () => undefined };
  }
  let server;
  try {
    server = await useEmbeddedPostgres({ dir: config.embeddedPostgres.dir, systemUser: config.embeddedPostgres.systemUser, onProgress });
  } catch (err) {
    if (err instanceof EmbeddedPostgresError) throw new StartupError(`DATABASE_URL is not set and the embedded Postgres cannot be used: ${err.message}`);
    throw err;
  }
  const how = {
    initialised: `initialised now in ${server.timings.initdbMs} ms, started in ${server.timings.startMs} ms`,
    started: `started in ${server.timings.startMs} ms`,
    joined: `already running as pid ${server.pid}`,
  }[server.how];
  const shown = (file: string) => {
    const where = path.relative(process.cwd(), file) || '.';
    return where.startsWith('..') ? file : where;
  };
  return {
    url: server.url(EMBEDDED_DATABASE),
    embedded: true,
    description:
      `embedded Postgres ${server.version} in ${shown(server.dataDir)} on the unix socket ${shown(path.join(server.socketDir, `.s.PGSQL.${server.port}`))}` +
      ` (${how}${server.runsAs ? `; runs as ${server.runsAs}` : ''}; set DATABASE_URL to use another)`,
    async release() {
      await server.release();
    },
  };
}

/** The configuration with its Postgres chosen. */
export function connected(config: Config, database: ChosenDatabase): ConnectedConfig {
  return { ...config, databaseUrl: database.url };
}
