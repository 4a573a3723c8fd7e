// Every snippet README.md and docs/*.md present as code to run is run here, as written, against a real
// service this file starts the way the README says (`npm start`), on loopback only.
//
// The convention (also in docs/architecture.md, "Documentation that runs"):
// - A fenced block tagged sh, bash, ts, js, python or html is code to run. Other tags (json, text, http,
//   ini, yaml, promql, none) are data or output, and are not run.
// - With no marker, sh runs in bash and ts/js in Node 24, in document order: a shell block sees the
//   variables earlier shell blocks of its document exported (one terminal session per document), every
//   curl fails on an HTTP error, and the block must exit 0. A json block that directly follows a command
//   block is the command's output: the real output must have exactly its keys (unless it abbreviates
//   itself with "…"), and the ids it shows stand for the real ones in later blocks. A json block with
//   text between it and its command says so with `<!-- output -->`.
// - `<!-- snippet: NAME -->` on the line before the fence names a driver below that runs the block in a
//   way the generic runners cannot: a server that runs until stopped, a web page, a function given a real
//   delivery. Each driver runs the snippet's own text and says what it adds.
// - `<!-- not-runnable: REASON -->` leaves a block out, with the reason; the test lists it as skipped.
// What the test changes in a snippet before running it is only where things are on this machine: the
// service's address for http://localhost:3000 (and the example hosts), the receiver's for localhost:4000,
// the real keys and ids for the example ones, and the absolute path of ./sdk/.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateTestHeader, verifyWebhook } from '../sdk/index.ts';
import { launchBrowser } from './support/browser.ts';
import { TEST_POSTGRES_URL } from './support/database.ts';
import { deleteStream, freePort } from './support/nats-server.ts';
import { harnessNatsUrl, requires } from './support/requirements.ts';
import { createDatabase } from '../src/kernel/adapters/postgres/database.ts';
import { api, Receiver, type ReceivedRequest } from './support/webhooks.ts';
import { waitFor } from './support/wait.ts';

const REPO = fileURLToPath(new URL('..', import.meta.url));
const RUNNABLE = new Set(['sh', 'bash', 'ts', 'js', 'python', 'html']);
const WAIT_MS = 60_000;
const BLOCK_TIMEOUT_MS = 120_000;

// ---------------------------------------------------------------- the documents

type Marker = { kind: 'snippet'; name: string; arg?: string } | { kind: 'not-runnable'; reason: string } | { kind: 'output' };

interface Block {
  readonly file: string;
  readonly line: number;
  readonly lang: string;
  readonly code: string;
  readonly marker?: Marker;
  /** The json block right after this one (only blank lines between), if any: this block's output. */
  next?: Block;
}

function parseMarker(line: string | undefined): Marker | undefined {
  if (/^<!--\s*output\s*-->$/.test(line?.trim() ?? '')) return { kind: 'output' };
  const m = /^<!--\s*(snippet|not-runnable):\s*(.*?)\s*-->$/.exec(line?.trim() ?? '');
  if (!m) return undefined;
  if (m[1] === 'not-runnable') return { kind: 'not-runnable', reason: m[2]! };
  const [, name, arg] = /^(\S+)(?:\s+"(.*)")?$/.exec(m[2]!) ?? [];
  return { kind: 'snippet', name: name!, ...(arg === undefined ? {} : { arg }) };
}

/** The fenced blocks of a Markdown file, each with the marker on the line before it. */
function blocksOf(file: string): Block[] {
  const lines = readFileSync(path.join(REPO, file), 'utf8').split('\n');
  const blocks: Block[] = [];
  let open: { lang: string; start: number; indent: number; marker?: Marker; body: string[] } | undefined;
  let lastEnd = -1;
  lines.forEach((line, i) => {
    const fence = /^(\s*)```(\S*)\s*$/.exec(line);
    if (!open && fence) {
      open = { lang: fence[2]!, start: i, indent: fence[1]!.length, marker: parseMarker(lines[i - 1]), body: [] };
      return;
    }
    if (open && fence && fence[2] === '') {
      const block: Block = { file, line: open.start + 1, lang: open.lang, code: open.body.join('\n'), marker: open.marker };
      const before = blocks.at(-1);
      // Output: a json block right after a command, or one marked <!-- output --> after the text that introduces it.
      const adjacent = lines.slice(lastEnd + 1, open.start).every((l) => l.trim() === '');
      if (before && block.lang === 'json' && (adjacent || block.marker?.kind === 'output')) before.next = block;
      blocks.push(block);
      lastEnd = i;
      open = undefined;
      return;
    }
    // A fence indented in a list indents its lines as much.
    if (open) open.body.push(line.slice(Math.min(open.indent, line.length - line.trimStart().length)));
  });
  return blocks;
}

const DOCUMENTS = ['README.md', ...readdirSync(path.join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const BLOCKS = new Map(DOCUMENTS.map((file) => [file, blocksOf(file)]));
const runnable = (b: Block) => RUNNABLE.has(b.lang) || b.marker?.kind === 'snippet';

// ---------------------------------------------------------------- the service, as the README starts it

interface Sandbox {
  merchant_id: string;
  test_secret_key: string;
  test_publishable_key: string;
  webhook_secret: string;
  test_cards: { number: string; behaviour: string }[];
}

let base: string;
let servicePort: number;
let service: ChildProcess;
let serviceOutput = '';
let serviceEnv: Record<string, string>;
let sessionBase: Record<string, string>;
let work: string;
let dbName: string;
let stream: string;
let docsSandbox: Sandbox;
let readmeReceiver: Receiver;
let captureReceiver: Receiver;
let browser: Browser | undefined;
const background = new Set<ChildProcess>();

/** This process's environment without what would point a child at another service. */
function cleanEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('VITEST') || k === 'NODE_OPTIONS') continue;
    if (/^(DATABASE_|NATS_|PORT$|HOST$|PUBLIC_URL$|CHECKOUT_|LOG_LEVEL$|SERVE_WORKERS$|RUN_DISPATCHER$|WEBHOOK_|VAULT_)/.test(k)) continue;
    env[k] = v;
  }
  return env;
}

beforeAll(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'docs-snippets-'));
  // Every curl of a snippet fails on an HTTP error status, so a 4xx cannot pass unnoticed.
  mkdirSync(path.join(work, 'bin'));
  writeFileSync(path.join(work, 'bin', 'curl'), '#!/bin/sh\nexec /usr/bin/curl --fail-with-body "$@"\n');
  chmodSync(path.join(work, 'bin', 'curl'), 0o755);
  servicePort = await freePort();
  base = `http://127.0.0.1:${servicePort}`;
  const id = randomBytes(5).toString('hex');
  dbName = `checkout_test_docs_${id}`;
  stream = `TEST_DOCS_${id}`;
  serviceEnv = {
    // A database of its own on the run's Postgres (the machine's, or the run's embedded one: its URL carries the password).
    DATABASE_URL: `${TEST_POSTGRES_URL}/${dbName}`,
    // The run's NATS when it has one; else none, and the events travel through Postgres, as after the README's two commands.
    NATS_URL: harnessNatsUrl() ?? '',
    NATS_STREAM: stream,
    NATS_SUBJECT_PREFIX: `test.docs.${id}.events`,
    PORT: String(servicePort),
    HOST: '127.0.0.1',
    PUBLIC_URL: base,
    // The receivers of these snippets listen on loopback.
    WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    VAULT_DEV_KEY_FILE: path.join(work, 'vault-dev.key'),
  };
  // `npm start`, as the quick start says (npm ci has run: the suite runs from the installed tree).
  service = spawn('npm', ['start'], { cwd: REPO, env: { ...cleanEnv(), ...serviceEnv }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  const keep = (chunk: Buffer) => {
    if (serviceOutput.length < 200_000) serviceOutput += chunk.toString();
  };
  service.stdout!.on('data', keep);
  service.stderr!.on('data', keep);
  await waitFor('npm start to answer /readyz', () => fetch(`${base}/readyz`).then((r) => r.status), (s) => s === 200, 120_000, 250);
  sessionBase = { ...cleanEnv(), ...serviceEnv, PATH: `${path.join(work, 'bin')}:${process.env.PATH}` };
  const created = await runProcess('npx', ['checkout', 'sandbox', 'create', '--name', 'Docs shop'], sessionBase, 60_000);
  expect(created.code, created.stderr).toBe(0);
  docsSandbox = JSON.parse(created.stdout) as Sandbox;
  readmeReceiver = await Receiver.start();
  captureReceiver = await Receiver.start();
}, 240_000);

afterAll(async () => {
  for (const child of background) await stopGroup(child, 'SIGKILL');
  await browser?.close().catch(() => undefined);
  if (service) await stopGroup(service, 'SIGTERM');
  await readmeReceiver?.close();
  await captureReceiver?.close();
  const admin = createDatabase({ url: `${TEST_POSTGRES_URL}/postgres`, poolMax: 1 });
  await admin.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [dbName]).catch(() => undefined);
  await admin.destroy();
  await deleteStream(stream);
  if (work) rmSync(work, { recursive: true, force: true });
}, 60_000);

// ---------------------------------------------------------------- processes

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end (its process group is killed after timeoutMs). */
async function runProcess(command: string, args: string[], env: Record<string, string>, timeoutMs = BLOCK_TIMEOUT_MS, input?: string): Promise<Run> {
  const child = spawn(command, args, { cwd: REPO, env, stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  if (input !== undefined) child.stdin!.end(input);
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.once('exit', (c) => resolve(c)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    // gone already
  }
}

/** Sends signal to the child's process group (what Ctrl-C does in a terminal); waits 15 s, then kills it. Answers whether it ended by itself. */
async function stopGroup(child: ChildProcess, signal: NodeJS.Signals): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  killGroup(child, signal);
  const ended = await Promise.race([exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 15_000))]);
  if (!ended) {
    killGroup(child, 'SIGKILL');
    await exited;
  }
  background.delete(child);
  return ended;
}

/** A process that runs until stopped: its output so far, and a way to wait for a line. */
interface Running {
  readonly child: ChildProcess;
  output(): string;
  waitFor(text: string | RegExp, timeoutMs?: number): Promise<void>;
}

function startBackground(command: string, args: string[], env: Record<string, string>): Running {
  const child = spawn(command, args, { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  background.add(child);
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const exited = new Promise<never>((_, reject) => child.once('exit', (code, signal) => reject(new Error(`${args.join(' ')} ended (${signal ?? code}):\n${out.slice(-3000)}`))));
  exited.catch(() => undefined);
  return {
    child,
    output: () => out,
    waitFor: (text, timeoutMs = WAIT_MS) => {
      const seen = waitFor(`${String(text)} in the output of ${args.join(' ')}`, () => out, (o) => (typeof text === 'string' ? o.includes(text) : text.test(o)), timeoutMs, 50).catch((err: Error) => {
        throw new Error(`${err.message}\n--- output:\n${out.slice(-3000)}`);
      });
      // A process that ended will print nothing more: say so at once.
      return Promise.race([seen.then(() => undefined), exited]);
    },
  };
}

// ---------------------------------------------------------------- a document's session

const ID = /^(?:ord|mer|sk_test|sk_live|pk_test|pk_live|whsec|we|evt|plink|re|dp|cus|card|sub|po|pay|att|key)_[A-Za-z0-9_]{6,}$/;
const ABBREVIATED = /"(?:\.\.\.|…)"|…/;

/** One document's terminal: its environment, the real values of its example ids, its receiver. */
class Session {
  env: Record<string, string>;
  readonly subs = new Map<string, string>();
  sandbox: Sandbox;
  receiverPort: number;
  lastOrder?: { id: string; checkout_url: string; client_secret?: string; reference: string };
  #n = 0;
  #placeholderOrder?: string;

  constructor(env: Record<string, string>, sandbox: Sandbox, receiverPort: number) {
    this.env = env;
    this.sandbox = sandbox;
    this.receiverPort = receiverPort;
  }

  file(ext: string): string {
    return path.join(work, `snippet-${randomBytes(3).toString('hex')}-${++this.#n}.${ext}`);
  }

  /** The snippet as it runs on this machine (see the top of this file). */
  async apply(code: string): Promise<string> {
    let out = code
      .replaceAll('http://localhost:3000', base)
      .replaceAll('https://api.checkout.example', base)
      .replaceAll('https://checkout.example.com', base)
      .replaceAll('https://shop.example/webhooks', `http://127.0.0.1:${this.receiverPort}/webhooks`)
      .replaceAll('http://localhost:4000', `http://127.0.0.1:${this.receiverPort}`)
      .replaceAll('.listen(4000', `.listen(${this.receiverPort}`)
      .replaceAll("from './sdk/", `from '${REPO}sdk/`)
      // The packages run from their sources here; test/sdk-packages.test.ts installs them from their tarballs.
      .replace(/from '@hosted-checkout\/(node|webhooks|mobile|fields|vendure)'/g, (_, pkg: string) => `from '${REPO}sdk/${pkg}/index.ts'`)
      .replace(/^npm install (@hosted-checkout\/[a-z]+ ?)+$/gm, ': # the package, from this repository\'s sources');
    for (const [example, real] of [...this.subs].sort((a, b) => b[0].length - a[0].length)) out = out.replaceAll(example, real);
    out = out.replaceAll('sk_test_...', this.sandbox.test_secret_key).replaceAll('sk_test_…', this.sandbox.test_secret_key).replaceAll('pk_test_…', this.sandbox.test_publishable_key);
    if (/ord_…(?!_)/.test(out)) out = out.replace(/ord_…(?!_)/g, await this.placeholderOrder());
    return out;
  }

  /** "Your order" where a snippet says ord_…: one pending order of the session's sandbox. */
  async placeholderOrder(): Promise<string> {
    this.#placeholderOrder ??= (await this.createOrder('docs-placeholder')).id;
    return this.#placeholderOrder;
  }

  async createOrder(reference: string): Promise<{ id: string; client_secret: string; reference: string; checkout_url: string }> {
    const res = await api<{ id: string; client_secret: string; reference: string; checkout_url: string }>(base, this.key(), 'POST', '/v1/orders', { amount: 1500, currency: 'EUR', reference });
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    return res.json;
  }

  /** The test secret key this session's commands use. */
  key(): string {
    return this.env.CHECKOUT_KEY ?? this.sandbox.test_secret_key;
  }

  /** Runs a shell block in this session's terminal; its exports carry over to the next block. */
  async shell(code: string, extraEnv: Record<string, string> = {}): Promise<Run> {
    const script = this.file('sh');
    const envOut = `${script}.env`;
    writeFileSync(script, await this.apply(code));
    const run = await runProcess('bash', ['-c', 'set -eo pipefail; source "$1"; env -0 > "$2"', 'bash', script, envOut], { ...this.env, ...extraEnv });
    if (run.code === 0) {
      const next: Record<string, string> = {};
      for (const entry of readFileSync(envOut, 'utf8').split('\0')) {
        const eq = entry.indexOf('=');
        if (eq > 0) next[entry.slice(0, eq)] = entry.slice(eq + 1);
      }
      for (const k of ['_', 'SHLVL', 'PWD', 'OLDPWD', ...Object.keys(extraEnv)]) delete next[k];
      this.env = next;
    }
    return run;
  }

  /** Writes a TypeScript snippet (applied) to a file of its own and answers the path. */
  async tsFile(code: string): Promise<string> {
    const file = this.file('ts');
    writeFileSync(file, await this.apply(code));
    return file;
  }

  /** Learns from a command's real output what the example beside it stood for. */
  learn(example: unknown, real: unknown): void {
    if (typeof example === 'string' && typeof real === 'string' && ID.test(example) && example !== real) {
      this.subs.set(example, real);
      const [ep, es] = [example.slice(0, example.indexOf('_') + 1), example.slice(example.indexOf('_') + 1)];
      if ((ep === 'ord_' || ep === 'mer_') && real.startsWith(ep)) this.subs.set(es, real.slice(ep.length));
      return;
    }
    if (Array.isArray(example) && Array.isArray(real)) example.forEach((e, i) => this.learn(e, real[i]));
    else if (isObject(example) && isObject(real)) for (const k of Object.keys(example)) this.learn(example[k], real[k]);
  }

  /** Keeps what a command printed that later blocks stand on: the sandbox and the order it made. */
  note(real: unknown): void {
    if (!isObject(real)) return;
    if (typeof real.test_secret_key === 'string') this.sandbox = real as unknown as Sandbox;
    if (real.object === 'order') this.lastOrder = real as unknown as Session['lastOrder'];
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Where an example's keys and a real answer's differ, as paths ("order.client_secret: missing from the example"). */
function keyDifferences(example: unknown, real: unknown, at = ''): string[] {
  if (isObject(example) && isObject(real)) {
    const out: string[] = [];
    for (const k of Object.keys(real)) if (!(k in example)) out.push(`${at}${k}: in the real answer, missing from the example`);
    for (const k of Object.keys(example)) if (!(k in real)) out.push(`${at}${k}: in the example, not in the real answer`);
    for (const k of Object.keys(example)) if (k in real) out.push(...keyDifferences(example[k], real[k], `${at}${k}.`));
    return out;
  }
  if (Array.isArray(example) && Array.isArray(real) && example.length > 0 && real.length > 0) return keyDifferences(example[0], real[0], `${at}0.`);
  return [];
}

/** Checks a command's output against the json example after it, and learns its ids. */
function compareWithExample(session: Session, block: Block, stdout: string): void {
  const example = block.next;
  let real: unknown;
  try {
    real = JSON.parse(stdout);
  } catch {
    if (example && !ABBREVIATED.test(example.code)) throw new Error(`${block.file}:${block.line} shows JSON output (line ${example.line}), but printed: ${stdout.slice(0, 500)}`);
    return;
  }
  session.note(real);
  if (!example || ABBREVIATED.test(example.code)) return;
  const shown = JSON.parse(example.code) as unknown;
  expect(keyDifferences(shown, real), `the example at ${example.file}:${example.line} against the real output of line ${block.line}`).toEqual([]);
  session.learn(shown, real);
}

// ---------------------------------------------------------------- runners

type Driver = (block: Block, session: Session) => Promise<void>;

async function runShellBlock(block: Block, session: Session, extraEnv: Record<string, string> = {}): Promise<Run> {
  // Never under the running suite: these replace node_modules, start a server that does not return, or run the suite.
  const unsafe = /\bnpm (ci|install(?! @hosted-checkout\/)|i|test|start)\b|\bnpx checkout (serve|dispatch|worker|listen)\b/.exec(block.code);
  if (unsafe) throw new Error(`${block.file}:${block.line} runs \`${unsafe[0]}\`: give it a driver (<!-- snippet: NAME -->) or <!-- not-runnable: reason -->`);
  const run = await session.shell(block.code, extraEnv);
  expect(run.code, `${block.file}:${block.line} exited ${run.code}\n--- stdout:\n${run.stdout.slice(-2000)}\n--- stderr:\n${run.stderr.slice(-2000)}`).toBe(0);
  compareWithExample(session, block, run.stdout);
  return run;
}

async function runTs(file: string, session: Session, extraEnv: Record<string, string> = {}): Promise<Run> {
  const run = await runProcess(process.execPath, [file], { ...session.env, ...extraEnv });
  expect(run.code, `${file} exited ${run.code}\n--- stdout:\n${run.stdout.slice(-2000)}\n--- stderr:\n${run.stderr.slice(-2000)}`).toBe(0);
  return run;
}

const GENERIC: Record<string, Driver> = {
  sh: async (block, session) => void (await runShellBlock(block, session)),
  ts: async (block, session) => void (await runTs(await session.tsFile(block.code), session)),
};
GENERIC.bash = GENERIC.sh!;
GENERIC.js = GENERIC.ts!;

/** A real delivery of the service's dispatcher, signed with a known endpoint secret, for the verifiers. */
let realDelivery: Promise<{ request: ReceivedRequest; secret: string }> | undefined;
function aRealDelivery(session: Session): Promise<{ request: ReceivedRequest; secret: string }> {
  realDelivery ??= (async () => {
    const endpoint = await api<{ secret: string }>(base, session.sandbox.test_secret_key, 'POST', '/v1/webhook_endpoints', { url: captureReceiver.url(), enabled_events: ['order.created'] });
    expect(endpoint.status).toBe(201);
    const order = await session.createOrder('docs-verify');
    const request = await waitFor('the delivery of order.created', () => captureReceiver.requests.find((r) => r.body.data.id === order.id), (r) => r !== undefined, WAIT_MS);
    return { request: request!, secret: endpoint.json.secret };
  })();
  return realDelivery;
}

/** The running receiver of docs/webhooks.md, once started. */
let docReceiver: Running | undefined;

/** The drivers that open the snippet in Chromium: skipped, and named, where there is none. */
const BROWSER_DRIVERS = new Set(['embedded-fields']);

const DRIVERS: Record<string, Driver> = {
  /** The quick start's `npm start`: the service this file started; its first start prints what the README says. */
  'npm-start': async (block, session) => {
    expect(block.code.trim()).toBe('npm ci\nnpm start');
    const readme = readFileSync(path.join(REPO, block.file), 'utf8');
    const text = [...BLOCKS.get(block.file)!].find((b) => b.line > block.line && b.lang === 'text')!;
    const merchant = /--merchant (mer_\w+)/.exec(serviceOutput)?.[1];
    expect(merchant, serviceOutput.slice(0, 2000)).toBeDefined();
    const exampleMerchant = /--merchant (mer_\w+)/.exec(text.code)![1]!;
    session.subs.set(exampleMerchant, merchant!);
    for (const line of text.code.split('\n')) expect(serviceOutput).toContain(line.replace(exampleMerchant, merchant!));
    // The JSON after those lines has the fields the README lists, and no live key.
    const json = /\n(\{\n[\s\S]*?\n\})\n/.exec(serviceOutput)?.[1];
    const first = JSON.parse(json!) as Sandbox & Record<string, unknown>;
    const listed = /The JSON that follows has the test-mode fields of the one below\s*\(([^)]*)\)/.exec(readme)![1]!.match(/`[a-z_]+`/g)!.map((s) => s.slice(1, -1));
    expect(Object.keys(first).sort()).toEqual([...listed].sort());
    session.sandbox = first;
  },

  /** Pays the quick start's order by transfer; the order's checkout_url then shows a receipt that exists. */
  'pay-by-transfer': async (block, session) => {
    const run = await runShellBlock(block, session);
    expect(JSON.parse(run.stdout)).toMatchObject({ status: 'paid', method: 'bank_transfer' });
    const page = await fetch(session.lastOrder!.checkout_url.replace(/^http:\/\/localhost:\d+/, base));
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('<h1>Payment successful</h1>');
    expect(html).not.toContain('return-link');
  },

  /** `checkout listen` until Ctrl-C: it says Ready, forwards a new event signed, and stops on SIGINT. */
  listen: async (block, session) => {
    const script = session.file('sh');
    writeFileSync(script, await session.apply(block.code));
    const listen = startBackground('bash', ['-c', 'set -eo pipefail; source "$1"', 'bash', script], session.env);
    await listen.waitFor('Ready!');
    const secret = /signing secret is (whsec_\w+)/.exec(listen.output())![1]!;
    const order = await session.createOrder('docs-listen');
    const event = await waitFor('order.created of the new order', async () => (await api<{ data: { id: string }[] }>(base, session.key(), 'GET', `/v1/events?order_id=${order.id}&type=order.created`)).json.data[0]?.id, (id) => id !== undefined, WAIT_MS);
    await listen.waitFor(new RegExp(`order\\.created\\s+${event}\\s+<-- 200`));
    if (block.file === 'README.md') {
      const got = readmeReceiver.of(event!)[0]!;
      expect(verifyWebhook(got.raw, got.signature, secret).id).toBe(event);
    }
    expect(await stopGroup(listen.child, 'SIGINT'), `Ctrl-C stops checkout listen:\n${listen.output().slice(-2000)}`).toBe(true);
  },

  /** Sets the default endpoint's URL; the service then delivers there itself, signed with the sandbox's webhook_secret. */
  'endpoint-url': async (block, session) => {
    const run = await runShellBlock(block, session);
    expect(JSON.parse(run.stdout)).toMatchObject({ url: `http://127.0.0.1:${session.receiverPort}/webhooks`, status: 'enabled', is_default: true });
    const order = await session.createOrder('docs-endpoint');
    const got = await waitFor('a delivery from the service', () => readmeReceiver.requests.find((r) => r.body.data.id === order.id), (r) => r !== undefined, WAIT_MS);
    expect(verifyWebhook(got!.raw, got!.signature, session.sandbox.webhook_secret).type).toBe('order.created');
  },

  /** The order object of docs/api.md: the keys of a real GET /v1/orders/:id of the order created before it. */
  'order-object': async (block, session) => {
    const real = await api(base, session.key(), 'GET', `/v1/orders/${session.lastOrder!.id}`);
    expect(real.status).toBe(200);
    const shown = JSON.parse(block.code) as unknown;
    expect(keyDifferences(shown, real.json), `${block.file}:${block.line}`).toEqual([]);
    session.learn(shown, real.json);
  },

  /** A command that runs until Ctrl-C: started, its ready text awaited, then stopped with SIGINT. */
  follow: async (block, session) => {
    const script = session.file('sh');
    writeFileSync(script, await session.apply(block.code));
    const running = startBackground('bash', ['-c', 'set -eo pipefail; source "$1"', 'bash', script], session.env);
    await running.waitFor(block.marker?.kind === 'snippet' ? block.marker.arg! : '');
    expect(await stopGroup(running.child, 'SIGINT'), `Ctrl-C stops it:\n${running.output().slice(-2000)}`).toBe(true);
  },

  /** Paying from a script: ORDER is a new order, CARD the sandbox's approved test card, as the text asks. */
  'pay-from-script': async (block, session) => {
    const card = session.sandbox.test_cards.find((c) => c.behaviour === 'approved')!.number;
    const run = await runShellBlock(block, session, { CARD: card, CHECKOUT_PUBLISHABLE_KEY: session.sandbox.test_publishable_key });
    expect(run.stdout.trim()).toBe('"PAYMENT_STATUS_SUCCEEDED"');
    const made = await api<{ data: { status: string }[] }>(base, session.key(), 'GET', '/v1/orders?reference=script-1&limit=1');
    expect(made.json.data[0]?.status).toBe('paid');
  },

  /** A block that goes on from the one before it (the same program): both run together. */
  continues: async (block, session) => {
    const blocks = BLOCKS.get(block.file)!;
    const before = blocks.slice(0, blocks.indexOf(block)).findLast((b) => b.lang === block.lang)!;
    const run = await runTs(await session.tsFile(`${before.code}\n${block.code}`), session, { CHECKOUT_SECRET_KEY: session.key() });
    expect(run.stdout).toMatch(/amount_invalid amount req_/);
  },

  /** The mobile quick start, given what it says comes from the app: a client secret, the challenge card and its code. */
  'mobile-quick-start': async (block, session) => {
    const order = await session.createOrder('docs-mobile');
    const card = session.sandbox.test_cards.find((c) => c.behaviour === 'challenge')!.number;
    const given = `const clientSecret = ${JSON.stringify(order.client_secret)};\nconst number = ${JSON.stringify(card)};\nconst cvc = '123';\nconst name = 'Ada Lovelace';\nconst code = '123456';\n`;
    const observe = `\nconsole.log(JSON.stringify({ loaded: order.id, methods, result: result.kind, final: final.kind }));\n`;
    const run = await runTs(await session.tsFile(`${given}${block.code}${observe}`), session);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1)!)).toMatchObject({ loaded: order.id, result: 'paid', final: 'paid' });
  },

  /** The embedded fields' page, served from another origin and paid in Chromium with the approved card. */
  'embedded-fields': async (block, session) => {
    const order = await session.createOrder('docs-fields');
    const page = (await session.apply(block.code)).replace('{{ order.client_secret }}', order.client_secret);
    const shop: Server = http.createServer((req, res) => {
      if (req.url === '/pay') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Pay</title></head><body>\n${page}\n</body></html>`);
      else if (req.url === '/thanks') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!doctype html><title>Thanks</title><p>Thank you');
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => shop.listen(0, '127.0.0.2', resolve));
    try {
      browser ??= await launchBrowser();
      const context = await browser.newContext({ locale: 'en-US' });
      context.setDefaultTimeout(WAIT_MS);
      const tab = await context.newPage();
      await tab.goto(`http://127.0.0.2:${(shop.address() as AddressInfo).port}/pay`);
      const card = session.sandbox.test_cards.find((c) => c.behaviour === 'approved')!.number;
      await tab.frameLocator('#card-number iframe').locator('input').fill(card);
      await tab.frameLocator('#card-expiry iframe').locator('input').fill(`12 / ${(new Date().getUTCFullYear() + 2) % 100}`);
      await tab.frameLocator('#card-cvc iframe').locator('input').fill('123');
      await tab.locator('#name').fill('Ada Lovelace');
      await tab.getByRole('button', { name: 'Pay' }).click();
      await tab.waitForURL('**/thanks');
      await context.close();
    } finally {
      await new Promise((resolve) => shop.close(resolve));
    }
    expect((await api<{ status: string }>(base, session.key(), 'GET', `/v1/orders/${order.id}`)).json.status).toBe('paid');
  },

  /**
   * The receiver of docs/webhooks.md, run until the end of the document with CHECKOUT_WEBHOOK_SECRET as the
   * text says: the test default endpoint is pointed at it, an order is paid, and the service's own signed
   * deliveries are answered 200 and fulfilled; a tampered body is answered 400.
   */
  'webhook-receiver': async (block, session) => {
    docReceiver = startBackground(process.execPath, [await session.tsFile(block.code)], session.env);
    await docReceiver.waitFor('Receiving webhooks at');
    const endpointId = `we_default_${session.sandbox.merchant_id.slice(4)}_test`;
    const patched = await api(base, session.key(), 'PATCH', `/v1/webhook_endpoints/${endpointId}`, { url: `http://127.0.0.1:${session.receiverPort}/webhooks` });
    expect(patched.status, JSON.stringify(patched.json)).toBe(200);
    const order = await session.createOrder('docs-receiver-1');
    expect((await api(base, session.key(), 'POST', `/v1/test_helpers/orders/${order.id}/simulate_transfer`)).status).toBe(200);
    await docReceiver.waitFor(`fulfilment queued for ${order.reference}`);
    const paid = await api<{ data: { id: string }[] }>(base, session.key(), 'GET', `/v1/events?order_id=${order.id}&type=order.paid`);
    const deliveries = await waitFor(
      'the 200 of the receiver in the delivery log',
      async () => (await api<{ data: { endpoint_id: string; status_code: number | null }[] }>(base, session.key(), 'GET', `/v1/events/${paid.json.data[0]!.id}/deliveries`)).json.data,
      (d) => d.some((a) => a.endpoint_id === endpointId && a.status_code === 200),
      WAIT_MS,
    );
    expect(deliveries.filter((a) => a.endpoint_id === endpointId).map((a) => a.status_code)).toEqual([200]);
    // Once per event: a second copy of a delivery is answered 200 and not fulfilled again; a changed body is refused.
    const payload = JSON.stringify({ id: `evt_docs${randomBytes(6).toString('hex')}`, type: 'order.paid', created: new Date().toISOString(), livemode: false, sequence: 2, data: { id: 'ord_docs', reference: 'DOCS-TWICE', amount: 100, currency: 'EUR' } });
    const send = (body: string) => fetch(`http://127.0.0.1:${session.receiverPort}/webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', 'checkout-signature': generateTestHeader({ payload, secret: session.sandbox.webhook_secret }) }, body });
    expect((await send(payload)).status).toBe(200);
    expect((await send(payload)).status).toBe(200);
    const tampered = await send(payload.replace('"amount":100', '"amount":1'));
    expect([tampered.status, await tampered.text()]).toEqual([400, 'signature_mismatch']);
    await docReceiver.waitFor('fulfilment queued for DOCS-TWICE');
    expect(docReceiver.output().split('fulfilment queued for DOCS-TWICE').length - 1).toBe(1);
  },

  /** generateTestHeader against the running receiver: it prints 200, and the receiver fulfils INV-1. */
  'test-header': async (block, session) => {
    expect(docReceiver, 'the receiver above runs').toBeDefined();
    const run = await runTs(await session.tsFile(block.code), session);
    expect(run.stdout.trim()).toBe('200');
    await docReceiver!.waitFor('fulfilment queued for INV-1');
  },

  /** The node:crypto verifier, given a real delivery of the service: it accepts it, and refuses it changed or late. */
  'verify-ts': async (block, session) => {
    const { request, secret } = await aRealDelivery(session);
    const module = await session.tsFile(block.code);
    const driver = session.file('ts');
    writeFileSync(
      driver,
      `import { verify } from ${JSON.stringify(module)};
const raw = Buffer.from(process.env.RAW_B64!, 'base64');
const [header, secret] = [process.env.HEADER!, process.env.SECRET!];
const outcome = (f: () => unknown) => { try { f(); return 'accepted'; } catch (e) { return (e as Error).message; } };
const event = verify(raw, header, secret) as { id: string };
console.log(JSON.stringify({ id: event.id, tampered: outcome(() => verify(Buffer.concat([raw, Buffer.from(' ')]), header, secret)), late: outcome(() => verify(raw, header, secret, Date.now() + 600_000)) }));
`,
    );
    const run = await runTs(driver, session, { RAW_B64: request.raw.toString('base64'), HEADER: request.signature, SECRET: secret });
    expect(JSON.parse(run.stdout)).toEqual({ id: request.body.id, tampered: expect.stringContaining('signature mismatch'), late: expect.stringContaining('tolerance') });
  },

  /** The Python verifier, given the same real delivery. */
  'verify-python': async (block, session) => {
    const { request, secret } = await aRealDelivery(session);
    const file = session.file('py');
    writeFileSync(
      file,
      `${await session.apply(block.code)}

import base64, os
raw = base64.b64decode(os.environ["RAW_B64"])
header, secret = os.environ["HEADER"], os.environ["SECRET"]
def outcome(f):
    try:
        f()
        return "accepted"
    except WebhookVerificationError as e:
        return str(e)
event = verify(raw, header, secret)
print(json.dumps({"id": event["id"], "tampered": outcome(lambda: verify(raw + b" ", header, secret)), "late": outcome(lambda: verify(raw, header, secret, now=time.time() + 600))}))
`,
    );
    const run = await runProcess('python3', [file], { ...session.env, RAW_B64: request.raw.toString('base64'), HEADER: request.signature, SECRET: secret });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ id: request.body.id, tampered: expect.stringContaining('signature mismatch'), late: expect.stringContaining('tolerance') });
  },
};

// ---------------------------------------------------------------- the tests

describe('the documents mark their code', () => {
  it('every block of code to run has a runner, a driver or a reason not to run', () => {
    const problems: string[] = [];
    const used = new Set<string>();
    for (const blocks of BLOCKS.values()) {
      for (const b of blocks) {
        if (b.marker?.kind === 'snippet') {
          used.add(b.marker.name);
          if (!DRIVERS[b.marker.name]) problems.push(`${b.file}:${b.line}: no driver named ${b.marker.name}`);
        } else if (RUNNABLE.has(b.lang) && !b.marker && !GENERIC[b.lang]) {
          problems.push(`${b.file}:${b.line}: a ${b.lang} block needs <!-- snippet: NAME --> or <!-- not-runnable: reason -->`);
        } else if (b.marker?.kind === 'not-runnable' && b.marker.reason.length < 20) {
          problems.push(`${b.file}:${b.line}: say why it does not run`);
        } else if (b.marker?.kind === 'output' && !blocks.some((x) => x.next === b && runnable(x))) {
          problems.push(`${b.file}:${b.line}: <!-- output --> on a block that follows no command`);
        }
      }
    }
    for (const name of Object.keys(DRIVERS)) if (!used.has(name)) problems.push(`driver ${name} runs no block`);
    expect(problems).toEqual([]);
    // The docs hold code to run; if this drops, blocks lost their language tags.
    expect([...BLOCKS.values()].flat().filter(runnable).length).toBeGreaterThan(30);
  });
});

for (const [file, blocks] of BLOCKS) {
  if (!blocks.some((b) => runnable(b) || b.marker)) continue;
  describe(file, () => {
    let session: Session;
    beforeAll(async () => {
      const receiverPort = file === 'README.md' ? readmeReceiver.port : file === 'docs/webhooks.md' ? await freePort() : readmeReceiver.port;
      const env = { ...sessionBase, ...(file === 'README.md' ? {} : { CHECKOUT_KEY: docsSandbox.test_secret_key, CHECKOUT_SECRET_KEY: docsSandbox.test_secret_key, CHECKOUT_WEBHOOK_SECRET: docsSandbox.webhook_secret }) };
      session = new Session(env, docsSandbox, receiverPort);
    });
    afterAll(async () => {
      if (file === 'docs/webhooks.md' && docReceiver) await stopGroup(docReceiver.child, 'SIGINT');
    });
    for (const block of blocks) {
      const name = `line ${block.line} (${block.lang || 'no language'})`;
      if (block.marker?.kind === 'not-runnable') {
        it.skip(`${name}: not run: ${block.marker.reason}`, () => undefined);
        continue;
      }
      if (!runnable(block)) continue;
      const driver = block.marker?.kind === 'snippet' ? DRIVERS[block.marker.name] : GENERIC[block.lang];
      const needs = block.marker?.kind === 'snippet' && BROWSER_DRIVERS.has(block.marker.name) ? requires('chromium') : {};
      it(`${name}${block.marker?.kind === 'snippet' ? `: ${block.marker.name}` : ''}`, { ...needs, timeout: BLOCK_TIMEOUT_MS * 2 }, async () => {
        await driver!(block, session);
      });
    }
  });
}

describe('checkout listen and README.md agree', () => {
  it('finds the service where README.md says, in that order', async () => {
    const readme = readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const sentence = /It finds the service at ([\s\S]+?); `--api-base`/.exec(readme)![1]!;
    const places = sentence.match(/`[^`]+`/g)!.map((s) => s.slice(1, -1));
    expect(places).toEqual(['$CHECKOUT_API_BASE', '$PUBLIC_URL', 'http://localhost:$PORT', 'http://localhost:3000']);
    const closed = await freePort();
    const settings: Record<string, { here: string; elsewhere: string }> = {
      $CHECKOUT_API_BASE: { here: base, elsewhere: `http://127.0.0.1:${closed}` },
      $PUBLIC_URL: { here: base, elsewhere: `http://127.0.0.1:${closed}` },
      'http://localhost:$PORT': { here: String(servicePort), elsewhere: String(closed) },
    };
    const variable = (place: string) => (place.includes('$PORT') ? 'PORT' : place.slice(1));
    for (let i = 0; i < 3; i++) {
      // This place points at the service, the later ones at a closed port, the earlier ones are unset.
      const env: Record<string, string> = { ...cleanEnv(), CHECKOUT_API_KEY: docsSandbox.test_secret_key };
      for (let j = i; j < 3; j++) env[variable(places[j]!)] = j === i ? settings[places[j]!]!.here : settings[places[j]!]!.elsewhere;
      const listen = startBackground(process.execPath, ['bin/checkout.ts', 'listen', '--forward-to', readmeReceiver.url()], env);
      await listen.waitFor('Ready!');
      expect(await stopGroup(listen.child, 'SIGINT')).toBe(true);
    }
  }, 180_000);
});
