// A PgBouncer of the test's own, in transaction mode, on a loopback port in front of the test Postgres:
// generated config, trust auth with a userlist, its files in a temporary directory.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { freePort } from './nats-server.ts';
import { TEST_POSTGRES_URL } from './database.ts';
import { waitFor } from './wait.ts';

/** Debian's pgbouncer (`apt-get install pgbouncer`); PGBOUNCER_BIN overrides. */
export const PGBOUNCER_BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

/** The installed pgbouncer's version as [major, minor], or undefined when it is absent. */
export function pgbouncerVersion(binary = PGBOUNCER_BIN): [number, number] | undefined {
  if (!existsSync(binary)) return undefined;
  const out = spawnSync(binary, ['--version'], { encoding: 'utf8' }).stdout;
  const match = /PgBouncer (\d+)\.(\d+)/.exec(out);
  return match ? [Number(match[1]), Number(match[2])] : undefined;
}

/** A running PgBouncer. */
export interface OwnPgBouncer {
  readonly port: number;
  /** The URL of a database through it (same name, user and password as on Postgres). */
  url(database: string): string;
  /** Runs a command on its admin console (SHOW POOLS, SHOW STATS …); answers the rows. */
  admin(command: string): Promise<Record<string, unknown>[]>;
  /** Its log so far. */
  log(): string;
  stop(): Promise<void>;
}

/**
 * Starts pgbouncer on a free loopback port, pool_mode = transaction, in front of TEST_POSTGRES_URL's server.
 * `databases` adds entries (name = connection string) to the [databases] section beside the `*` fallback.
 */
export async function startPgBouncer(options: { poolSize?: number; databases?: Record<string, string>; settings?: Record<string, string> } = {}): Promise<OwnPgBouncer> {
  const server = new URL(TEST_POSTGRES_URL);
  const user = decodeURIComponent(server.username || 'postgres');
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), 'checkout-pgbouncer-'));
  // pgbouncer will not run as root: it then runs as the Postgres user (-u), which must read the config and write the log.
  const asRoot = userInfo().uid === 0;
  chmodSync(dir, 0o777);
  const settings: Record<string, string> = {
    listen_addr: '127.0.0.1',
    listen_port: String(port),
    unix_socket_dir: '',
    auth_type: 'trust',
    auth_file: path.join(dir, 'userlist.txt'),
    admin_users: user,
    pool_mode: 'transaction',
    default_pool_size: String(options.poolSize ?? 5),
    max_client_conn: '500',
    // node-postgres sends none of these, but drivers and tools may; pgbouncer refuses unknown startup parameters.
    ignore_startup_parameters: 'extra_float_digits,options',
    logfile: path.join(dir, 'pgbouncer.log'),
    pidfile: path.join(dir, 'pgbouncer.pid'),
    ...options.settings,
  };
  // The embedded Postgres listens on a unix socket only; its URL's host is the socket's directory, percent-encoded.
  const socketDir = server.hostname.startsWith('%2F') ? decodeURIComponent(server.hostname) : undefined;
  const host = `host=${socketDir ?? (server.hostname || '127.0.0.1')} port=${server.port || '5432'}`;
  const databases = Object.entries(options.databases ?? {}).map(([name, conn]) => `${name} = ${host} ${conn}`);
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    ['[databases]', ...databases, `* = ${host}`, '', '[pgbouncer]', ...Object.entries(settings).map(([k, v]) => `${k} = ${v}`), ''].join('\n'),
    { mode: 0o644 },
  );
  // The server's password, if its URL has one (the embedded Postgres's has): PgBouncer logs in to the server with it.
  writeFileSync(path.join(dir, 'userlist.txt'), `"${user}" "${decodeURIComponent(server.password)}"\n`, { mode: 0o600 });
  // As root it runs as the server's user: `postgres`, or the embedded Postgres's (the only one that may enter its socket's directory).
  const runAs = socketDir ? spawnSync('id', ['-nu', String(statSync(socketDir).uid)], { encoding: 'utf8' }).stdout.trim() : 'postgres';
  if (asRoot) {
    // Read by pgbouncer once it runs as that user.
    const ids = (flag: string) => Number(spawnSync('id', [flag, runAs], { encoding: 'utf8' }).stdout.trim());
    chownSync(path.join(dir, 'userlist.txt'), ids('-u'), ids('-g'));
  }
  const args = [...(asRoot ? ['-u', runAs] : []), path.join(dir, 'pgbouncer.ini')];
  const child: ChildProcess = spawn(PGBOUNCER_BIN, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const log = () => {
    try {
      return readFileSync(settings.logfile!, 'utf8') + stderr;
    } catch {
      return stderr;
    }
  };
  const url = (database: string) => {
    const through = new URL(TEST_POSTGRES_URL);
    through.hostname = '127.0.0.1';
    through.port = String(port);
    through.pathname = `/${database}`;
    return through.toString();
  };
  const query = async (database: string, text: string) => {
    const client = new pg.Client({ connectionString: url(database) });
    await client.connect();
    try {
      return (await client.query(text)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  };
  try {
    await waitFor('pgbouncer to answer', () => query('pgbouncer', 'SHOW VERSION').then(() => true), (ok) => ok, 20_000, 100);
  } catch (err) {
    child.kill('SIGKILL');
    throw new Error(`pgbouncer did not start: ${log()}`, { cause: err });
  }
  return {
    port,
    url,
    admin: (command) => query('pgbouncer', command),
    log,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
