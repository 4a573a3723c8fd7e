/**
 * The embedded Postgres (src/kernel/adapters/postgres/embedded-postgres.ts) on a cluster of this file's own in a temporary
 * directory: processes share one server through leases and the last one out stops it; what a crash leaves behind
 * (a postmaster whose process died, a postmaster.pid naming a dead or reused pid, a lock whose holder died) does
 * not stop the next start; and every command of bin/checkout.ts without DATABASE_URL finds the same database, the
 * one `checkout serve` runs when it runs, otherwise one it starts for itself and stops after.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, lchownSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, test } from 'vitest';
import { useEmbeddedPostgres, type EmbeddedPostgres } from '../src/kernel/adapters/postgres/embedded-postgres.ts';
import { waitFor } from './support/wait.ts';

const MODULE = fileURLToPath(new URL('../src/kernel/adapters/postgres/embedded-postgres.ts', import.meta.url));
const CLI = fileURLToPath(new URL('../bin/checkout.ts', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));

const root = mkdtempSync(path.join(tmpdir(), 'checkout-embedded-test-'));
// Under root the server runs as checkout-pg, which must reach the cluster's directory.
chmodSync(root, 0o755);
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  // Whatever a failed test left running in this file's clusters is stopped.
  for (const dir of readdirSync(root)) await stopPostmaster(path.join(root, dir));
  rmSync(root, { recursive: true, force: true });
});

const use = (dir: string) => useEmbeddedPostgres({ dir, systemUser: 'checkout-pg' });

function postmasterPid(dir: string): number | undefined {
  try {
    return Number(readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return undefined;
  }
}

/** Whether the process runs (a zombie, a process that exited and was not reaped yet, does not). */
function running(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) !== 'Z';
  } catch {
    return false;
  }
}

async function stopPostmaster(dir: string): Promise<void> {
  const pid = postmasterPid(dir);
  if (!running(pid)) return;
  process.kill(pid!, 'SIGINT');
  await waitFor('the postmaster to stop', () => running(pid), (alive) => !alive, 30_000);
}

async function answers(server: EmbeddedPostgres): Promise<number> {
  const client = new pg.Client({ connectionString: server.url('postgres') });
  await client.connect();
  try {
    return (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
  } finally {
    await client.end();
  }
}

/** A process that takes a lease on the cluster in dir, prints its pid and port, and waits to be killed. */
async function leaseInChild(dir: string): Promise<{ child: ChildProcess; pid: number; port: number }> {
  const script = `import { useEmbeddedPostgres } from ${JSON.stringify(MODULE)};
const server = await useEmbeddedPostgres({ dir: ${JSON.stringify(dir)}, systemUser: 'checkout-pg' });
console.log(JSON.stringify({ pid: server.pid, port: server.port }));
setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const line = await waitFor('the child to hold a lease', () => out, (text) => text.includes('\n'), 120_000);
  return { child, ...(JSON.parse(line.trim()) as { pid: number; port: number }) };
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  children.delete(child);
}

describe('the embedded Postgres of one directory', () => {
  const dir = path.join(root, 'shared');

  test('the first use initialises it; a second joins the same server; it stops only when the last user releases it', async () => {
    const first = await use(dir);
    expect(first.how).toBe('initialised');
    expect(first.port).not.toBe(5432);
    expect(first.url('x')).toBe(`postgres://postgres:${encodeURIComponent(readFileSync(path.join(dir, 'password'), 'utf8').trim())}@${encodeURIComponent(path.join(realpathSync(dir), 'socket'))}:${first.port}/x`);
    await answers(first);
    const second = await use(dir);
    expect(second).toMatchObject({ how: 'joined', pid: first.pid, port: first.port });
    expect(await first.release()).toEqual({ stopped: false });
    await answers(second);
    expect((await second.release()).stopped).toBe(true);
    await waitFor('the postmaster to exit', () => running(first.pid), (alive) => !alive, 10_000);
    expect(existsSync(path.join(dir, 'data', 'postmaster.pid'))).toBe(false);
    // Started again on the same data, and on the same port (a client's URL stays valid across starts).
    const again = await use(dir);
    expect(again).toMatchObject({ how: 'started', port: first.port });
    expect(again.pid).not.toBe(first.pid);
    await again.release();
  });

  test('asks for the password it generated: a connection without it is refused', async () => {
    const server = await use(dir);
    try {
      const url = new URL(server.url('postgres'));
      url.password = '';
      const client = new pg.Client({ connectionString: url.toString() });
      client.on('error', () => undefined);
      await expect(client.connect()).rejects.toThrow(/password/);
      await client.end().catch(() => undefined);
      expect(readFileSync(path.join(dir, 'password'), 'utf8').trim()).toBe(decodeURIComponent(new URL(server.url('postgres')).password));
    } finally {
      await server.release();
    }
  });

  test('a postmaster left running by a process that was killed is joined, and stopped by the last user after it', async () => {
    const holder = await leaseInChild(dir);
    await kill(holder.child);
    expect(running(holder.pid)).toBe(true);
    const next = await use(dir);
    expect(next).toMatchObject({ how: 'joined', pid: holder.pid, port: holder.port });
    await answers(next);
    // The dead process's lease does not keep it running.
    expect((await next.release()).stopped).toBe(true);
    await waitFor('the postmaster to exit', () => running(holder.pid), (alive) => !alive, 10_000);
  });

  test('it listens on a unix socket in a directory only its user may enter, and on no TCP port another local user could take over once it dies', async () => {
    const server = await use(dir);
    try {
      const socketDir = path.join(realpathSync(dir), 'socket');
      expect(server.socketDir).toBe(socketDir);
      const info = statSync(socketDir);
      expect(info.mode & 0o777).toBe(0o700);
      expect(info.uid).toBe(process.getuid?.() === 0 ? Number(spawnSync('id', ['-u', 'checkout-pg'], { encoding: 'utf8' }).stdout.trim()) : process.getuid?.());
      expect(readdirSync(socketDir)).toContain(`.s.PGSQL.${server.port}`);
      // postmaster.pid's listen-address line: empty, no TCP.
      expect(readFileSync(path.join(dir, 'data', 'postmaster.pid'), 'utf8').split('\n')[5]).toBe('');
      // Nothing answers on 127.0.0.1 at its port, which another user could take and ask the password of (in clear).
      const tcp = new pg.Client({ host: '127.0.0.1', port: server.port, user: 'postgres', database: 'postgres', connectionTimeoutMillis: 3000 });
      tcp.on('error', () => undefined);
      await expect(tcp.connect()).rejects.toThrow(/ECONNREFUSED/);
      await tcp.end().catch(() => undefined);
    } finally {
      await server.release();
    }
  });

  test('killed (kill -9), the postmaster is started again on the same socket; a fake server on 127.0.0.1 at its port never hears the password', { timeout: 120_000 }, async () => {
    const server = await useEmbeddedPostgres({ dir, systemUser: 'checkout-pg', watchMs: 200 });
    // A local user's stand-in for the server: it asks for the password in clear, and keeps whatever it is sent.
    const heard: Buffer[] = [];
    const fake = net.createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', (startup) => {
        heard.push(startup);
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 3])); // AuthenticationCleartextPassword
        socket.on('data', (chunk) => heard.push(chunk));
      });
    });
    try {
      const first = server.pid;
      process.kill(first, 'SIGKILL');
      await waitFor('the postmaster to die', () => running(first), (alive) => !alive, 30_000);
      await new Promise<void>((resolve, reject) => {
        fake.once('error', reject);
        fake.listen(server.port, '127.0.0.1', () => resolve());
      });
      await waitFor('a new postmaster', () => server.pid, (pid) => pid !== first && running(pid), 60_000);
      expect(postmasterPid(dir)).toBe(server.pid);
      await waitFor('the server to answer again', () => answers(server).then(() => true, () => false), (ok) => ok, 30_000);
      expect(heard).toEqual([]);
    } finally {
      await new Promise((resolve) => fake.close(resolve));
      expect((await server.release()).stopped).toBe(true);
    }
  });

  test('a postmaster.pid naming a killed postmaster, a live process that is no Postgres (a pid reused) or a zombie does not stop a start', { timeout: 120_000 }, async () => {
    // Not watched: the start after the kill below is the next process's, not this one's restart.
    const server = await useEmbeddedPostgres({ dir, systemUser: 'checkout-pg', watchMs: 0 });
    // kill -9: the pid file stays behind, naming a process that is gone.
    process.kill(server.pid, 'SIGKILL');
    await waitFor('the postmaster to die', () => running(server.pid), (alive) => !alive, 30_000);
    expect(postmasterPid(dir)).toBe(server.pid);
    // Where PID 1 is slow to reap, the killed postmaster is a zombie for a while, which Postgres alone takes for a live one.
    const after = await use(dir);
    expect(after.how).toBe('started');
    await answers(after);
    await server.release();
    expect((await after.release()).stopped).toBe(true);

    // After a reboot the pid in a stale file may belong to another process: Postgres alone would refuse to start.
    const other = spawn('sleep', ['60']);
    children.add(other);
    const file = path.join(dir, 'data', 'postmaster.pid');
    const stale = `${other.pid}\n${path.join(dir, 'data')}\n1700000000\n${server.port}\n\n127.0.0.1\n  1234567         1\nready   \n`;
    writeFileSync(file, stale);
    // As root the data directory is the server user's: the file must be its too, as a postmaster's would be.
    if (process.getuid?.() === 0) spawnSync('chown', ['checkout-pg:checkout-pg', file]);
    const reused = await use(dir);
    expect(reused.how).toBe('started');
    expect(reused.pid).not.toBe(other.pid);
    await answers(reused);
    await reused.release();
    await kill(other);

    // A postmaster that exited but was not reaped (a zombie: PID 1 reaps late, or never in a container whose PID 1 is
    // not an init) looks alive to Postgres, which would refuse to start for as long as it lasts. Here the zombie is a
    // child of `sleep 60`, which never reaps it, and belongs to the server's user (another user's pid Postgres ignores).
    const ids = (flag: string) => Number(spawnSync('id', [flag, 'checkout-pg'], { encoding: 'utf8' }).stdout.trim());
    const parent = spawn('sh', ['-c', 'sleep 0 & exec sleep 60'], process.getuid?.() === 0 ? { uid: ids('-u'), gid: ids('-g') } : {});
    children.add(parent);
    const zombie = await waitFor(
      'a zombie',
      () => readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).map(Number).find((pid) => {
        try {
          const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
          return stat.includes(`) Z ${parent.pid} `);
        } catch {
          return false;
        }
      }),
      (pid) => pid !== undefined,
      10_000,
    );
    writeFileSync(file, stale.replace(String(other.pid), String(zombie)));
    if (process.getuid?.() === 0) spawnSync('chown', ['checkout-pg:checkout-pg', file]);
    const afterZombie = await use(dir);
    expect(afterZombie.how).toBe('started');
    await answers(afterZombie);
    await afterZombie.release();
    await kill(parent);
  });

  test('a lock left by a process that died does not stop the next start', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], { encoding: 'utf8' });
    writeFileSync(path.join(dir, 'lock'), `${gone.stdout.trim()}\n`);
    const server = await use(dir);
    expect(server.how).toBe('started');
    await server.release();
    expect(existsSync(path.join(dir, 'lock'))).toBe(false);
  });
});

describe('a directory another local user could change is refused before anything is written in it', () => {
  test('one that others may write (even sticky, as /tmp is): no password, log or cluster is made in it', async () => {
    const open = path.join(root, 'open');
    mkdirSync(open);
    chmodSync(open, 0o1777);
    await expect(use(open)).rejects.toThrow(/may be written by other users \(mode 1777\)/);
    expect(readdirSync(open).sort()).toEqual(['users']);
  });

  const asRoot = process.getuid?.() === 0;
  if (!asRoot) console.log('embedded-postgres: the planted-directory case needs root (to give a directory to another user); skipped');
  test.skipIf(!asRoot)('as root, one of another user, with a password and a symlinked log planted: refused, the link\'s target untouched', async () => {
    const planted = path.join(root, 'planted');
    const target = path.join(root, 'root-only-file');
    writeFileSync(target, 'root only\n', { mode: 0o600 });
    mkdirSync(planted, { mode: 0o777 });
    chmodSync(planted, 0o777);
    writeFileSync(path.join(planted, 'password'), 'known-to-the-planter\n');
    symlinkSync(target, path.join(planted, 'postgres.log'));
    const nobody = 65534;
    chownSync(path.join(planted, 'password'), nobody, nobody);
    lchownSync(path.join(planted, 'postgres.log'), nobody, nobody);
    chownSync(planted, nobody, nobody);
    await expect(use(planted)).rejects.toThrow(/belongs to uid 65534, not to this process's user/);
    expect(statSync(target).uid).toBe(0);
    expect(readFileSync(target, 'utf8')).toBe('root only\n');
    expect(lstatSync(path.join(planted, 'postgres.log')).isSymbolicLink()).toBe(true);
    expect(existsSync(path.join(planted, 'data'))).toBe(false);
  });
});

describe('the commands without DATABASE_URL (and without NATS_URL: events through Postgres)', () => {
  const dir = path.join(root, 'commands');
  const env: NodeJS.ProcessEnv = { ...process.env, EMBEDDED_POSTGRES_DIR: dir, NATS_URL: '', PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info' };
  delete env.DATABASE_URL;
  let serve: ChildProcess | undefined;
  let serveOut = '';

  afterAll(async () => {
    if (serve) await kill(serve);
  });

  function cli(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn(process.execPath, [CLI, ...args], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(child);
    let stdout = '';
    let stderr = '';
    child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    return new Promise((resolve) =>
      child.once('close', (code) => {
        children.delete(child);
        resolve({ code, stdout, stderr });
      }),
    );
  }

  test('run alone, a command starts the embedded Postgres for itself and stops it; beside `checkout serve`, every command uses the server serve runs', { timeout: 300_000 }, async () => {
    const alone = await cli(['sandbox', 'create', '--name', 'Alone']);
    expect(alone.code, alone.stderr).toBe(0);
    expect(alone.stderr).toMatch(/^checkout: Postgres: embedded Postgres \S+ in \S+ on the unix socket \S+\/socket\/\.s\.PGSQL\.\d+ \(initialised now in \d+ ms/m);
    const merchant = (JSON.parse(alone.stdout) as { merchant_id: string }).merchant_id;
    // Stopped with the command.
    expect(postmasterPid(dir)).toBeUndefined();

    serve = spawn(process.execPath, [CLI, 'serve'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(serve);
    serve.stdout!.setEncoding('utf8').on('data', (chunk: string) => (serveOut += chunk));
    await waitFor('serve to listen', () => serveOut, (out) => /Checkout service listening on/.test(out), 120_000);
    expect(serveOut).toMatch(/"msg":"Postgres: embedded Postgres \S+ in \S+ on the unix socket \S+\/socket\/\.s\.PGSQL\.\d+ \(started in \d+ ms/);
    const postmaster = postmasterPid(dir);
    expect(running(postmaster)).toBe(true);

    const beside = `already running as pid ${postmaster}`;
    const migrate = await cli(['migrate']);
    expect(migrate).toMatchObject({ code: 0, stdout: 'Already up to date.\n' });
    expect(migrate.stderr).toContain(beside);
    const keys = await cli(['keys', 'create', '--merchant', merchant, '--mode', 'live']);
    expect(keys.code, keys.stderr).toBe(0);
    expect(keys.stderr).toContain(beside);
    expect(JSON.parse(keys.stdout)).toMatchObject({ merchant_id: merchant, livemode: true });
    const verify = await cli(['ledger', 'verify']);
    expect(verify).toMatchObject({ code: 0, stdout: 'ledger: every invariant holds\n' });
    expect(verify.stderr).toContain(beside);

    // A worker process joins too, and leaving does not stop the server serve still uses.
    const worker = spawn(process.execPath, [CLI, 'worker', '--only', 'sweeper'], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(worker);
    let workerOut = '';
    worker.stdout!.setEncoding('utf8').on('data', (chunk: string) => (workerOut += chunk));
    await waitFor('the worker to run', () => workerOut, (out) => /Workers running: sweeper/.test(out), 120_000);
    expect(workerOut).toContain(beside);
    const workerExit = new Promise((resolve) => worker.once('exit', resolve));
    worker.kill('SIGTERM');
    await workerExit;
    expect(running(postmaster)).toBe(true);

    // The postmaster killed under serve: serve starts it again on the same socket, and is ready again without a restart.
    const base = `http://${/Checkout service listening on (\S+?:\d+)/.exec(serveOut)![1]}`;
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    process.kill(postmaster!, 'SIGKILL');
    // Said once pg_ctl has seen it ready. The pid is taken from what serve says: under load a first start may fail
    // after writing its postmaster.pid (backends of the killed one still holding its memory) and be tried again.
    const saidAgain = new RegExp(`The embedded Postgres \\(pid ${postmaster}\\) had stopped; started it again \\(pid (\\d+)\\)`);
    const said = await waitFor('serve to start the postmaster again and say so', () => saidAgain.exec(serveOut), (match) => match !== null, 120_000, 100);
    const restarted = Number(said![1]);
    expect(restarted).not.toBe(postmaster);
    expect(running(restarted)).toBe(true);
    expect(postmasterPid(dir)).toBe(restarted);
    await waitFor('serve to be ready again', () => fetch(`${base}/readyz`).then((r) => r.status), (status) => status === 200, 60_000, 250);

    // serve, the last user, stops it as it stops.
    const serveExit = new Promise<number | null>((resolve) => serve!.once('exit', resolve));
    serve.kill('SIGTERM');
    expect(await serveExit).toBe(0);
    expect(running(restarted)).toBe(false);
    expect(postmasterPid(dir)).toBeUndefined();
  });
});
