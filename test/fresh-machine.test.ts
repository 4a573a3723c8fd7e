/**
 * `npm ci && npm start` on a machine with nothing else installed (issue 20): a copy of the repository's files
 * (node_modules linked, as `npm ci` would have made it) in a temporary directory, and test/fixtures/fresh-machine.ts
 * run in a network namespace with only loopback (`unshare -n`), where no Postgres and no NATS can be reached. There
 * `npm start` with no DATABASE_URL and no NATS_URL initialises and starts the embedded Postgres in the copy's
 * .checkout/postgres, says its events go through Postgres, prints the sandbox's keys, and serves; `npx checkout
 * listen` forwards to a receiver of the session's; an order created with the secret key is paid with the approved
 * test card through CheckoutService with its client secret and the publishable key; the signed order.paid reaches
 * the receiver through `checkout listen` and verifies with the sandbox's webhook secret; SIGTERM stops the service
 * with exit code 0 and the embedded Postgres with it. A second `npm start` reuses the data: no new sandbox, the same
 * key sees the paid order. Run as root (Postgres then runs as the system user checkout-pg) and, when root, again as
 * an ordinary user. Skipped, with the reason, where network namespaces cannot be made (not root, or a sandbox that
 * forbids them).
 */
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, test } from 'vitest';
import { requires } from './support/requirements.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const isRoot = process.getuid?.() === 0;
/** nobody: an ordinary user every Debian has. */
const ORDINARY = { uid: 65534, gid: 65534 };

interface Report {
  starts: {
    postgresLine?: string;
    listeningLine?: string;
    sandbox?: { merchant_id: string; test_secret_key: string };
    readyMs: number;
    readyz: { ready: boolean; checks: Record<string, { status: string; mode?: string }> };
    stop?: { code: number | null; signal: string | null; ms: number; postmasterLeft: boolean; pidFileLeft: boolean };
  }[];
  listen?: { ready: boolean; exit?: { code: number | null; signal: string | null } | 'still running' };
  order?: { id: string; created: number; payment: string; status: string };
  webhook?: { type: string; orderId: unknown; reference: unknown; verified: true | string; afterPaymentMs: number };
  second?: { status: number; orderStatus: string; reference: string };
  error?: string;
  output?: string;
}

const copies: string[] = [];

afterAll(() => {
  for (const dir of copies) rmSync(dir, { recursive: true, force: true });
});

/** The repository's files (tracked, and new ones not ignored) in a new directory, node_modules linked; no .checkout. */
function freshCopy(owner?: { uid: number; gid: number }): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'checkout-fresh-'));
  copies.push(dir);
  // Postgres runs as another user under root: it must reach the copy.
  chmodSync(dir, 0o755);
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const file of files) {
    const target = path.join(dir, file);
    mkdirSync(path.dirname(target), { recursive: true });
    try {
      copyFileSync(path.join(REPO, file), target);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err; // deleted in the work tree, not yet in git
    }
  }
  symlinkSync(path.join(REPO, 'node_modules'), path.join(dir, 'node_modules'));
  mkdirSync(path.join(dir, '.home'));
  if (owner) execFileSync('chown', ['-R', '--no-dereference', `${owner.uid}:${owner.gid}`, dir]);
  return dir;
}

/** Runs the fixture in a new network namespace (loopback up, nothing else), as the given user; answers its report. */
async function session(copy: string, owner?: { uid: number; gid: number }): Promise<Report> {
  const drop = owner ? ['setpriv', `--reuid=${owner.uid}`, `--regid=${owner.gid}`, '--clear-groups', '--'] : [];
  const args = ['-n', '--', 'sh', '-c', 'ip link set lo up && exec "$@"', 'sh', ...drop, process.execPath, path.join(copy, 'test', 'fixtures', 'fresh-machine.ts'), copy];
  const child = spawn('unshare', args, { cwd: copy, env: { PATH: process.env.PATH, HOME: path.join(copy, '.home') }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  // The fixture bounds each start (240 s) and stop (60 s); this bounds the whole session, under the test's timeout.
  const timer = setTimeout(() => child.kill('SIGKILL'), 560_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve)).finally(() => clearTimeout(timer));
  const line = stdout.trim().split('\n').pop() ?? '';
  if (code !== 0 || !line.startsWith('{')) throw new Error(`the fixture exited with ${code}: ${stderr.slice(-3000)}${stdout.slice(-3000)}`);
  return JSON.parse(line) as Report;
}

/** Postgres processes whose data directory is in the copy: none may outlive the session. */
function postmastersOf(copy: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(`${copy}/.checkout/postgres/data`)) found.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

function expectFreshMachineSession(report: Report, copy: string, runsAs: string | undefined): void {
  expect(report.error, report.output).toBeUndefined();
  const [first, second] = report.starts;
  // The first start made the cluster in the copy's .checkout, on loopback, and said so.
  expect(first!.postgresLine).toMatch(/^Postgres: embedded Postgres \d+\.\d+ in \.checkout\/postgres\/data on the unix socket \.checkout\/postgres\/socket\/\.s\.PGSQL\.\d+ \(initialised now in \d+ ms, started in \d+ ms/);
  if (runsAs) expect(first!.postgresLine).toContain(`runs as ${runsAs}`);
  else expect(first!.postgresLine).not.toContain('runs as');
  // No NATS_URL: the events go through Postgres, and say so.
  expect(first!.listeningLine).toMatch(/; events through Postgres, no NATS: single node/);
  expect(first!.readyz).toMatchObject({ ready: true, checks: { postgres: { status: 'ok' }, migrations: { status: 'ok' }, events: { status: 'ok', mode: 'postgres-outbox' } } });
  expect(first!.readyz.checks).not.toHaveProperty('nats');
  expect(first!.sandbox?.test_secret_key).toMatch(/^sk_test_/);
  // Paid with the client secret and the publishable key, and the signed order.paid came through `checkout listen`.
  expect(report.listen?.ready).toBe(true);
  // ^C ended it (npx ends by the SIGINT it got, as npm does).
  expect(report.listen?.exit).not.toBe('still running');
  expect(report.order).toMatchObject({ created: 201, payment: 'paid', status: 'paid' });
  expect(report.webhook).toMatchObject({ type: 'order.paid', orderId: report.order!.id, reference: 'FRESH-1', verified: true });
  // SIGTERM stops each start, with exit code 0, and the embedded Postgres with it.
  for (const start of report.starts) expect(start.stop).toMatchObject({ code: 0, signal: null, postmasterLeft: false, pidFileLeft: false });
  // The second start found the data: no new sandbox printed, and the first key sees the paid order.
  expect(second!.postgresLine).toMatch(/^Postgres: embedded Postgres \d+\.\d+ in \.checkout\/postgres\/data on the unix socket \.checkout\/postgres\/socket\/\.s\.PGSQL\.\d+ \((started in \d+ ms|already running as pid \d+)/);
  expect(second!.sandbox).toBeUndefined();
  expect(report.second).toEqual({ status: 200, orderStatus: 'paid', reference: 'FRESH-1' });
  expect(postmastersOf(copy)).toEqual([]);
  console.info(
    `[fresh machine${runsAs ? `, Postgres as ${runsAs}` : ''}] first npm start ready in ${first!.readyMs} ms (${first!.postgresLine}), ` +
      `second in ${second!.readyMs} ms (${second!.postgresLine}); order.paid through checkout listen ${report.webhook!.afterPaymentMs} ms after paying; ` +
      `SIGTERM to exit: ${report.starts.map((s) => `${s.stop!.ms} ms`).join(', ')}`,
  );
}

describe('npm start on a machine with only loopback and no Postgres', requires('network-namespaces'), () => {
  test('initialises the embedded Postgres in .checkout, takes and pays an order, delivers the signed order.paid through checkout listen, stops on SIGTERM, and a second start finds the same data', { timeout: 600_000 }, async () => {
    const copy = freshCopy();
    const report = await session(copy);
    expectFreshMachineSession(report, copy, isRoot ? 'checkout-pg' : undefined);
  });

  test.runIf(isRoot)('the same as an ordinary user (nobody): Postgres runs as that user, no system user needed', { timeout: 600_000 }, async () => {
    const copy = freshCopy(ORDINARY);
    const report = await session(copy, ORDINARY);
    expectFreshMachineSession(report, copy, undefined);
  });
});
