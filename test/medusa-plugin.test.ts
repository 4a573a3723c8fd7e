// A real Medusa 2 server with @hosted-checkout/medusa, against the real service, on loopback. The package is packed
// and installed from its tarball into a Medusa project (test/support/medusa.ts: Medusa itself is installed once into
// a cache outside the repository); medusa-config.js is the package README's quick start, as shipped in the tarball;
// Medusa migrates a Postgres database of its own (on the run's Postgres) and starts with the system's Node. Through
// Medusa's admin API the suite makes a region offering the provider, a sales channel, a publishable key and a
// product; then, as a storefront does: cart → payment collection → payment session (our order, its client secret)
// → completing before paying is refused → the customer pays with the publishable key and the client secret → the
// cart completes into a Medusa order whose payment is captured, our order paid with the session as reference; a
// second cart is completed by our signed order.paid alone (Medusa's payment webhook flow); a partial refund from
// the admin API reaches our order. The packed types are checked against Medusa's in a TypeScript project.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckoutSession } from '../sdk/mobile/index.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { TEST_POSTGRES_URL } from './support/database.ts';
import { createMedusaShop, ensureMedusaApp, MEDUSA_APP_DIR, medusaCli, packMedusaPackages, run, shopEnv, type MedusaShop } from './support/medusa.ts';
import { Background } from './support/background.ts';
import { requires } from './support/requirements.ts';
import { waitFor } from './support/wait.ts';
import { api, createEndpoint, payOrder, startHarness, type Harness } from './support/webhooks.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const PROVIDER_ID = 'pp_hosted-checkout_hosted-checkout';
const ADMIN = { email: 'admin@shop.test', password: `pw-${randomBytes(8).toString('hex')}` };
const timings: string[] = [];
const work = mkdtempSync(path.join(tmpdir(), 'hosted-checkout-medusa-plugin-'));
const database = `medusa_test_${randomBytes(6).toString('hex')}`;
let h: Harness;
let shop: MedusaShop;
let merchant: SandboxCredentials;
let medusa: Background | undefined;
let medusaBase: string;
let env: NodeJS.ProcessEnv;
let adminToken: string;
let publishableKey: string;
let regionId: string;
let salesChannelId: string;
let variantId: string;
let databaseMade = false;

async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings.push(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
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

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

/** A call of Medusa's HTTP API: the admin's with the admin's token, the store's with the publishable key. */
async function medusaApi<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<{ status: number; json: T }> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (route.startsWith('/admin/')) headers.authorization = `Bearer ${adminToken}`;
  if (route.startsWith('/store/')) headers['x-publishable-api-key'] = publishableKey;
  const res = await fetch(`${medusaBase}${route}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as T };
}

/** The same, expecting a 2xx. */
async function ok<T = Record<string, unknown>>(method: string, route: string, body?: unknown): Promise<T> {
  const res = await medusaApi<T>(method, route, body);
  if (res.status >= 300) throw new Error(`${method} ${route} answered ${res.status}: ${JSON.stringify(res.json)}`);
  return res.json;
}

/** The README's first ```js block after "## Quick start": the medusa-config.js it tells a merchant to write. */
function quickStart(readme: string): string {
  const section = readme.slice(readme.indexOf('## Quick start'));
  const match = /```js\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('the README has no ```js block under "## Quick start"');
  return match[1]!;
}

interface PaymentSession {
  id: string;
  status: string;
  data: { checkout_order_id: string; checkout_url: string; client_secret?: string; session_id: string };
}

/** A storefront's cart of one product with its payment session of the provider. */
async function cartWithSession(): Promise<{ cartId: string; session: PaymentSession }> {
  const { cart } = await ok<{ cart: { id: string; total: number } }>('POST', '/store/carts', { region_id: regionId, sales_channel_id: salesChannelId, email: 'ada@example.com', items: [{ variant_id: variantId, quantity: 1 }] });
  expect(cart.total).toBe(25.99);
  const { payment_collection: collection } = await ok<{ payment_collection: { id: string } }>('POST', '/store/payment-collections', { cart_id: cart.id });
  const created = await ok<{ payment_collection: { payment_sessions: PaymentSession[] } }>('POST', `/store/payment-collections/${collection.id}/payment-sessions`, { provider_id: PROVIDER_ID });
  const session = created.payment_collection.payment_sessions.find((s) => s.data?.checkout_order_id)!;
  return { cartId: cart.id, session };
}

/** The Medusa order of a completed cart (found by its payment's session), with its payments, once there is one. */
async function medusaOrderOf(cartId: string, sessionId: string, timeoutMs: number) {
  return waitFor(
    `cart ${cartId} completed into a Medusa order`,
    async () => {
      const { cart } = await ok<{ cart: { completed_at: string | null } }>('GET', `/store/carts/${cartId}`);
      if (!cart.completed_at) return undefined;
      const { orders } = await ok<{ orders: { id: string; payment_status: string; payment_collections: { payments: { data: Record<string, unknown> }[] }[] }[] }>(
        'GET',
        '/admin/orders?fields=id,payment_status,*payment_collections,*payment_collections.payments&limit=100',
      );
      return orders.find((o) => o.payment_collections?.some((c) => c.payments?.some((p) => p.data?.session_id === sessionId)));
    },
    (order) => order !== undefined,
    timeoutMs,
    500,
  );
}

/** Our order as the merchant's API shows it. */
async function ourOrder(id: string) {
  return (await api<{ status: string; reference: string; amount: number; currency: string; amount_refunded: number }>(h.base, merchant.test_secret_key, 'GET', `/v1/orders/${id}`)).json;
}

let typecheck: Promise<{ code: number | null; output: string }> | undefined;

beforeAll(async () => {
  if (requires('medusa', 'postgres-tcp').skip) return;
  const [harness, , tarballs] = await Promise.all([
    timed('service start', () => startHarness()),
    timed('Medusa project (npm ci into the cache, or found there)', () => ensureMedusaApp()),
    timed('npm pack sdk/node sdk/medusa', () => packMedusaPackages(path.join(work, 'tarballs'))),
  ]);
  h = harness;
  shop = await timed('npm install of the tarballs into the Medusa project', () => createMedusaShop('medusa-plugin', [tarballs.node, tarballs.medusa]));
  // The packed types against Medusa's own, beside the boot (a merchant's strict TypeScript project; Medusa's .d.ts
  // do not all pass without skipLibCheck, so ours are held to Medusa's types by assignments in checked code).
  writeFileSync(path.join(shop.dir, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'es2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, noEmit: true, skipLibCheck: true, types: [] }, files: ['types.ts'] }));
  writeFileSync(path.join(shop.dir, 'types.ts'), CONSUMER_TYPES);
  typecheck = run(process.execPath, [path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', '.'], { cwd: shop.dir, env: shopEnv(process.execPath), timeoutMs: 300_000 }).then((r) => ({ code: r.code, output: r.stdout + r.stderr }));
  typecheck.catch(() => undefined);

  merchant = await h.merchant('Medusa shop');
  const port = await freePort();
  medusaBase = `http://127.0.0.1:${port}`;
  const endpoint = await createEndpoint(h.base, merchant.test_secret_key, `${medusaBase}/hooks/payment/hosted-checkout_hosted-checkout`, ['order.paid', 'order.authorized', 'order.failed', 'order.expired', 'order.voided']);
  await onPostgres(`CREATE DATABASE "${database}"`);
  databaseMade = true;
  // The README's configuration, as shipped in the tarball; the suite serves no admin dashboard (it is not built).
  const readme = readFileSync(path.join(shop.dir, 'node_modules', '@hosted-checkout', 'medusa', 'README.md'), 'utf8');
  writeFileSync(path.join(shop.dir, 'medusa-config.js'), `${quickStart(readme)}\nmodule.exports.admin = { ...module.exports.admin, disable: true };\n`);
  const postgres = new URL(TEST_POSTGRES_URL);
  postgres.pathname = `/${database}`;
  env = shopEnv(shop.node, {
    DATABASE_URL: postgres.toString(),
    HOST: '127.0.0.1',
    PORT: String(port),
    STORE_CORS: medusaBase,
    ADMIN_CORS: medusaBase,
    AUTH_CORS: medusaBase,
    JWT_SECRET: randomBytes(16).toString('hex'),
    COOKIE_SECRET: randomBytes(16).toString('hex'),
    CHECKOUT_API_URL: h.base,
    CHECKOUT_SECRET_KEY: merchant.test_secret_key,
    CHECKOUT_WEBHOOK_SECRET: endpoint.secret,
  });
  const cli = medusaCli(shop);
  const migrated = await timed('medusa db:migrate', () => run(cli.command, [...cli.args, 'db:migrate'], { cwd: shop.dir, env, timeoutMs: 600_000 }));
  if (migrated.code !== 0) throw new Error(`medusa db:migrate failed:\n${migrated.stdout}\n${migrated.stderr}`);
  const user = await timed('medusa user', () => run(cli.command, [...cli.args, 'user', '-e', ADMIN.email, '-p', ADMIN.password], { cwd: shop.dir, env, timeoutMs: 300_000 }));
  if (user.code !== 0) throw new Error(`medusa user failed:\n${user.stdout}\n${user.stderr}`);
  medusa = new Background(cli.command, [...cli.args, 'start'], shop.dir, env);
  await timed('medusa start', () => medusa!.waitFor('Medusa to start', /Server is ready on port/, 300_000));

  const login = await fetch(`${medusaBase}/auth/user/emailpass`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  adminToken = ((await login.json()) as { token: string }).token;
  const { region } = await ok<{ region: { id: string } }>('POST', '/admin/regions', { name: 'Europe', currency_code: 'eur', countries: ['de'], payment_providers: [PROVIDER_ID] });
  regionId = region.id;
  const { sales_channel: channel } = await ok<{ sales_channel: { id: string } }>('POST', '/admin/sales-channels', { name: 'Web shop' });
  salesChannelId = channel.id;
  const { api_key: key } = await ok<{ api_key: { id: string; token: string } }>('POST', '/admin/api-keys', { title: 'Storefront', type: 'publishable' });
  await ok('POST', `/admin/api-keys/${key.id}/sales-channels`, { add: [salesChannelId] });
  publishableKey = key.token;
  const { product } = await ok<{ product: { variants: { id: string }[] } }>('POST', '/admin/products', {
    title: 'Green tea',
    status: 'published',
    options: [{ title: 'Size', values: ['100 g'] }],
    variants: [{ title: '100 g', options: { Size: '100 g' }, manage_inventory: false, prices: [{ currency_code: 'eur', amount: 25.99 }] }],
    sales_channels: [{ id: salesChannelId }],
  });
  variantId = product.variants[0]!.id;
}, 1_200_000);

afterAll(async () => {
  const exit = await medusa?.stop();
  if (databaseMade) await onPostgres(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
  await typecheck?.catch(() => undefined);
  await h?.close();
  shop?.remove();
  rmSync(work, { recursive: true, force: true });
  if (timings.length > 0) console.log(`medusa-plugin timings (Medusa ${path.basename(MEDUSA_APP_DIR)}):\n  ${timings.join('\n  ')}${exit === undefined ? '' : `\n  medusa start ended by ${exit}`}`);
}, 120_000);

describe('@hosted-checkout/medusa in a real Medusa 2 server, against the real service', requires('medusa', 'postgres-tcp'), () => {
  it('loads as the region\'s payment provider', async () => {
    const { payment_providers: providers } = await ok<{ payment_providers: { id: string; is_enabled: boolean }[] }>('GET', `/store/payment-providers?region_id=${regionId}`);
    expect(providers.map((p) => p.id)).toContain(PROVIDER_ID);
  });

  it('cart → payment session (our order) → refused until paid → paid with the client secret → completed: Medusa\'s payment captured, ours paid, then refunded in part', { timeout: 180_000 }, async () => {
    const { cartId, session } = await cartWithSession();
    expect(session.data).toMatchObject({ checkout_order_id: expect.stringMatching(/^ord_/), session_id: session.id, client_secret: expect.stringMatching(/_secret_/) });
    expect(await ourOrder(session.data.checkout_order_id)).toMatchObject({ reference: session.id, amount: 2599, currency: 'EUR', status: 'pending' });

    // The customer has not paid: the cart is not completed.
    const early = await medusaApi<{ type?: string; message?: string }>('POST', `/store/carts/${cartId}/complete`);
    expect(early.json.type === 'order', JSON.stringify(early.json)).toBe(false);
    expect((await ok<{ cart: { completed_at: string | null } }>('GET', `/store/carts/${cartId}`)).cart.completed_at).toBeNull();

    // The storefront pays in its page: the publishable key and the session's client secret (the embedded fields' and mobile SDK's way).
    const card = merchant.test_cards.find((c) => c.behaviour === 'approved')!.number;
    const paid = await createCheckoutSession({ baseUrl: h.base, publishableKey: merchant.test_publishable_key, clientSecret: session.data.client_secret! }).payWithCard({ number: card, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada Lovelace' });
    expect(paid.kind).toBe('paid');

    const completed = await ok<{ type: string; order: { id: string; total: number } }>('POST', `/store/carts/${cartId}/complete`);
    expect(completed.type).toBe('order');
    expect(completed.order.total).toBe(25.99);
    const { order } = await ok<{ order: { payment_status: string; payment_collections: { payments: { id: string; amount: number; captured_at: string | null; data: Record<string, unknown> }[] }[] } }>(
      'GET',
      `/admin/orders/${completed.order.id}?fields=id,payment_status,*payment_collections,*payment_collections.payments`,
    );
    expect(order.payment_status).toBe('captured');
    const payment = order.payment_collections[0]!.payments[0]!;
    expect(payment.captured_at).not.toBeNull();
    expect(payment.data).toMatchObject({ checkout_order_id: session.data.checkout_order_id, checkout_status: 'paid', session_id: session.id });
    expect(payment.data).not.toHaveProperty('client_secret');
    expect(await ourOrder(session.data.checkout_order_id)).toMatchObject({ status: 'paid', reference: session.id });

    // A partial refund from Medusa's admin: 5.00 of 25.99.
    await ok('POST', `/admin/payments/${payment.id}/refund`, { amount: 5 });
    expect(await ourOrder(session.data.checkout_order_id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 500 });
  });

  it('a customer who pays and never comes back: our signed order.paid completes the cart through Medusa\'s payment webhook', { timeout: 180_000 }, async () => {
    const { cartId, session } = await cartWithSession();
    await payOrder(h.base, merchant.test_secret_key, session.data.checkout_order_id);
    // Medusa answers the delivery at once and processes it about five seconds later (its webhook_delay).
    const order = (await medusaOrderOf(cartId, session.id, 90_000))!;
    expect(order.payment_status).toBe('captured');
    const { events } = { events: (await api<{ data: { id: string }[] }>(h.base, merchant.test_secret_key, 'GET', `/v1/events?order_id=${session.data.checkout_order_id}&type=order.paid`)).json.data };
    const deliveries = await api<{ data: { status_code: number | null }[] }>(h.base, merchant.test_secret_key, 'GET', `/v1/events/${events[0]!.id}/deliveries`);
    expect(deliveries.json.data.map((d) => d.status_code)).toContain(200);
    expect(await ourOrder(session.data.checkout_order_id)).toMatchObject({ status: 'paid', reference: session.id });
  });

  it('the packed types hold against Medusa\'s own in a strict TypeScript project', { timeout: 300_000 }, async () => {
    const result = await timed('tsc over the packed types', () => typecheck!);
    expect(result.output).toBe('');
    expect(result.code).toBe(0);
  });
});

/** A merchant's TypeScript against the packed .d.ts and Medusa's types: the provider is what Medusa's interfaces ask. */
const CONSUMER_TYPES = `import provider, { HostedCheckoutProviderService, type HostedCheckoutOptions } from '@hosted-checkout/medusa';
import type { IPaymentProvider, ModuleProviderExports, WebhookActionResult } from '@medusajs/framework/types';
import { AbstractPaymentProvider } from '@medusajs/framework/utils';

export const exported: ModuleProviderExports = provider;
const options: HostedCheckoutOptions = { baseUrl: 'https://api.checkout.example', secretKey: 'sk_test_x', webhookSecret: ['whsec_new', 'whsec_old'], captureMethod: 'manual' };
export const service: IPaymentProvider = new HostedCheckoutProviderService({}, options);
export const base: AbstractPaymentProvider<HostedCheckoutOptions> = new HostedCheckoutProviderService({}, options);
export const action = (): Promise<WebhookActionResult> => service.getWebhookActionAndData({ data: {}, rawData: '', headers: {} });
// @ts-expect-error captureMethod is automatic or manual
export const wrong: HostedCheckoutOptions = { ...options, captureMethod: 'later' };
`;
