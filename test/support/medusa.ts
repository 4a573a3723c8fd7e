// A Medusa 2 project for the suites of @hosted-checkout/medusa, kept out of the repository's own npm ci (Medusa
// is about a thousand packages, 680 MB and three minutes to install here). test/fixtures/medusa-app holds its
// package.json and lock; it is installed once with `npm ci` into a cache outside the repository (os.tmpdir(), or
// MEDUSA_TEST_CACHE) named after the lock's hash, and reused by every later run. Each suite then makes a shop of
// its own inside that cache (a directory below it, whose node_modules gets our tarballs, while Medusa resolves
// from the cache's node_modules above), so that runs side by side never touch each other's files.
import { spawn, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { whilePackingAlone } from './pack-lock.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'medusa-app');
const LOCK = readFileSync(path.join(FIXTURE, 'package-lock.json'));

/** The Medusa version the fixture pins. */
export const MEDUSA_VERSION = (JSON.parse(readFileSync(path.join(FIXTURE, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies['@medusajs/medusa']!;

/** Where the installed fixture lives: one directory per lock, so that a new lock installs anew. */
export const MEDUSA_APP_DIR = path.join(process.env.MEDUSA_TEST_CACHE ?? path.join(tmpdir(), 'hosted-checkout-medusa'), `medusa-${MEDUSA_VERSION}-${createHash('sha256').update(LOCK).digest('hex').slice(0, 12)}`);
const INSTALLED = path.join(MEDUSA_APP_DIR, '.installed');

/**
 * The Node that runs Medusa: the system's (20 here, as a shop runs it; Medusa 2 wants ^20.19 or >=22.12), else this
 * process's. Undefined with the reason when neither fits.
 */
export function medusaNode(): { node: string } | { missing: string } {
  for (const node of ['/usr/bin/node', process.execPath]) {
    if (!existsSync(node)) continue;
    const version = spawnSync(node, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
    const [major, minor] = version.split('.').map(Number) as [number, number];
    if ((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22) return { node };
  }
  return { missing: `no Node for Medusa ${MEDUSA_VERSION} (^20.19 or >=22.12) at /usr/bin/node or ${process.execPath}` };
}

/** The npm on PATH outside the repository (the system's), as the script its command runs. */
export function systemNpmCli(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '' || path.resolve(dir).startsWith(ROOT)) continue;
    const npm = path.join(dir, 'npm');
    if (existsSync(npm)) return realpathSync(npm);
  }
  throw new Error('no npm on PATH');
}

/** This process's environment without npm's and the repository's additions, `node` on PATH being `node`. */
export function shopEnv(node: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE_OPTIONS' && k !== 'INIT_CWD'));
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '' && !path.resolve(dir).startsWith(ROOT));
  // Medusa's telemetry would post usage data; the suites' traffic stays on loopback.
  return { ...env, PATH: [path.dirname(node), ...dirs].join(path.delimiter), MEDUSA_DISABLE_TELEMETRY: 'true', ...extra };
}

/** What a finished command answered. */
export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; rejects after `timeoutMs`. */
export function run(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} took over ${options.timeoutMs} ms.\n${stdout}\n${stderr}`));
    }, options.timeoutMs);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Runs a command that must succeed; answers its output. */
async function mustRun(what: string, command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Run> {
  const result = await run(command, args, options);
  if (result.code !== 0) throw new Error(`${what} failed (exit ${result.code}):\n${result.stdout}\n${result.stderr}`);
  return result;
}

/**
 * Why the Medusa suites cannot run here, or undefined: a Node for Medusa, and the fixture installed in the cache
 * or the npm registry answering (`npm ping`) to install it.
 */
export function medusaMissing(): string | undefined {
  const node = medusaNode();
  if ('missing' in node) return node.missing;
  if (existsSync(INSTALLED)) return undefined;
  const ping = spawnSync(node.node, [systemNpmCli(), 'ping'], { encoding: 'utf8', timeout: 30_000, env: shopEnv(node.node) });
  if (ping.status === 0) return undefined;
  const why = (ping.error?.message ?? ping.stderr.trim().split('\n').pop()) || `exit ${ping.status}`;
  return `Medusa ${MEDUSA_VERSION} is not installed in ${MEDUSA_APP_DIR} and the npm registry does not answer to install it (npm ping: ${why})`;
}

/**
 * The fixture installed in the cache, once: the first run installs it (`npm ci` into a directory of its own, then
 * renamed into place), a run meanwhile waits for that one; later runs find it. Answers the time it took in seconds
 * (0 when it was there).
 */
export async function ensureMedusaApp(): Promise<number> {
  if (existsSync(INSTALLED)) return 0;
  const started = Date.now();
  mkdirSync(path.dirname(MEDUSA_APP_DIR), { recursive: true });
  const lock = `${MEDUSA_APP_DIR}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      // Another run installs it: wait for it, unless its lock is older than any install (that run died).
      if (existsSync(INSTALLED)) return (Date.now() - started) / 1000;
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })!.mtimeMs > 20 * 60_000) rmSync(lock, { recursive: true, force: true });
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
  try {
    if (existsSync(INSTALLED)) return 0;
    const staging = `${MEDUSA_APP_DIR}.installing-${randomBytes(4).toString('hex')}`;
    mkdirSync(staging);
    for (const file of ['package.json', 'package-lock.json']) copyFileSync(path.join(FIXTURE, file), path.join(staging, file));
    const { node } = medusaNode() as { node: string };
    try {
      await mustRun(`npm ci of Medusa ${MEDUSA_VERSION} in ${staging}`, node, [systemNpmCli(), 'ci', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: staging, env: shopEnv(node), timeoutMs: 900_000 });
      rmSync(MEDUSA_APP_DIR, { recursive: true, force: true });
      renameSync(staging, MEDUSA_APP_DIR);
    } finally {
      rmSync(staging, { recursive: true, force: true });
    }
    writeFileSync(INSTALLED, `${new Date().toISOString()}\n`);
    return (Date.now() - started) / 1000;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Packs @hosted-checkout/node and @hosted-checkout/medusa as a maintainer does in the repository (their prepack
 * builds them; never while another test file packs); answers the two tarballs.
 */
export async function packMedusaPackages(destination: string): Promise<{ node: string; medusa: string }> {
  mkdirSync(destination, { recursive: true });
  // npm's prepack scripts run with the repository's node_modules/.bin first on PATH, as in `npm pack` here.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  env.PATH = [path.join(ROOT, 'node_modules', '.bin'), env.PATH].join(path.delimiter);
  await whilePackingAlone(() => mustRun('npm pack of sdk/node and sdk/medusa', '/usr/bin/env', ['node', systemNpmCli(), 'pack', '-w', 'sdk/node', '-w', 'sdk/medusa', '--pack-destination', destination], { cwd: ROOT, env, timeoutMs: 300_000 }));
  return { node: path.join(destination, 'hosted-checkout-node-0.1.0.tgz'), medusa: path.join(destination, 'hosted-checkout-medusa-0.1.0.tgz') };
}

/** A shop of one suite: a directory inside the cached Medusa project, with our packages installed from their tarballs. */
export interface MedusaShop {
  readonly dir: string;
  readonly node: string;
  /** What `npm install` of the tarballs printed on stderr. */
  readonly installStderr: string;
  remove(): void;
}

/** Makes a shop and installs the tarballs into it as a merchant does (`npm install <tarball>`). */
export async function createMedusaShop(name: string, tarballs: readonly string[]): Promise<MedusaShop> {
  const { node } = medusaNode() as { node: string };
  const shops = path.join(MEDUSA_APP_DIR, 'shops');
  // Shops of runs that were killed before their afterAll: a run takes minutes, so these are long over.
  for (const entry of existsSync(shops) ? readdirSync(shops) : []) {
    if (Date.now() - statSync(path.join(shops, entry)).mtimeMs > 12 * 3600_000) rmSync(path.join(shops, entry), { recursive: true, force: true });
  }
  const dir = path.join(shops, `${name}-${randomBytes(4).toString('hex')}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', private: true }, null, 2)}\n`);
  const installed = await mustRun(`npm install of ${tarballs.map((t) => path.basename(t)).join(', ')}`, node, [systemNpmCli(), 'install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs], {
    cwd: dir,
    env: shopEnv(node),
    timeoutMs: 300_000,
  });
  // Medusa's CLI runs only in a project whose package.json names @medusajs/medusa: the shop's names what the cache
  // above it holds (written after the install, so that npm does not install Medusa a second time in the shop).
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
  const medusa = (JSON.parse(readFileSync(path.join(FIXTURE, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
  manifest.dependencies = { ...medusa, ...manifest.dependencies };
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return { dir, node, installStderr: installed.stderr, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The `medusa` command of the cached project, run by the shop's Node in the shop's directory. */
export function medusaCli(shop: MedusaShop): { command: string; args: string[] } {
  return { command: shop.node, args: [path.join(MEDUSA_APP_DIR, 'node_modules', '@medusajs', 'cli', 'cli.js')] };
}

