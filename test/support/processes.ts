// The service as an operator runs it: `checkout serve` and `checkout worker` as child processes of
// their own (node bin/checkout.ts), configured by environment only, and the means to tell which
// of them opened a given loopback connection.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { SandboxCredentials } from '../../src/modules/merchant/application/create-sandbox.ts';
import { freePort } from './nats-server.ts';
import { spawnCheckout } from './webhooks.ts';
import { waitFor } from './wait.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

/** A `checkout` child process. */
export interface CheckoutProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Kills it (SIGKILL unless told) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

function wrap(child: ChildProcess): CheckoutProcess {
  return {
    child,
    pid: child.pid!,
    async stop(signal = 'SIGKILL') {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill(signal);
      });
    },
  };
}

/** `checkout serve` on a free loopback port with env on top of this process's; resolves once /readyz answers 200 (90 s at most). */
export async function spawnServe(env: Record<string, string>): Promise<CheckoutProcess & { readonly base: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/checkout.ts', 'serve'], { cwd: REPO, env: { ...process.env, ...env, PORT: String(port), HOST: '127.0.0.1' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  // Drained always, kept short: a full pipe would stall the child.
  const keep = (chunk: Buffer) => (out = (out + chunk.toString()).slice(-20_000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const base = `http://127.0.0.1:${port}`;
  const exited = new Promise<never>((_, reject) => child.once('exit', (code, signal) => reject(new Error(`checkout serve exited (${signal ?? code}): ${out}`))));
  exited.catch(() => undefined);
  await Promise.race([
    exited,
    waitFor('checkout serve ready', () => fetch(`${base}/readyz`).then((res) => res.status), (status) => status === 200, 90_000, 200),
  ]);
  return { ...wrap(child), base };
}

/** `checkout worker --only <names>`; resolves once it says its workers run. */
export async function spawnWorker(names: readonly string[], env: Record<string, string>): Promise<CheckoutProcess> {
  const child = await spawnCheckout(['worker', '--only', names.join(',')], env, 'Workers running');
  // spawnCheckout keeps reading stdout; stderr must be drained as well.
  child.stderr!.resume();
  return wrap(child);
}

/** Runs `checkout <args>` to its end; answers its exit code and output. */
export async function runCheckout(args: readonly string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, ['bin/checkout.ts', ...args], { cwd: REPO, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

/** `checkout sandbox create --name …`: a sandbox merchant with test and live keys. */
export async function createSandboxWithCli(name: string, env: Record<string, string>): Promise<SandboxCredentials> {
  const res = await runCheckout(['sandbox', 'create', '--name', name], env);
  if (res.code !== 0) throw new Error(`checkout sandbox create exited ${res.code}: ${res.stderr}`);
  return JSON.parse(res.stdout) as SandboxCredentials;
}

/**
 * Which of `pids` owns the TCP socket 127.0.0.1:localPort → :remotePort (a connection one of them
 * opened to a loopback server of the test), read from /proc (Linux). Undefined when none does
 * (or the socket is gone already).
 */
export function socketOwner(localPort: number, remotePort: number, pids: readonly number[]): number | undefined {
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, '0');
  let inode: string | undefined;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      if (fields[1]!.endsWith(`:${hex(localPort)}`) && fields[2]!.endsWith(`:${hex(remotePort)}`)) inode = fields[9];
    }
    if (inode) break;
  }
  if (!inode || inode === '0') return undefined;
  const target = `socket:[${inode}]`;
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) === target) return pid;
      } catch {
        // closed meanwhile
      }
    }
  }
  return undefined;
}
