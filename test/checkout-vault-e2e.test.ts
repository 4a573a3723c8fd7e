/**
 * Saved cards on the hosted checkout, played in Debian's Chromium against the real service (all
 * traffic to 127.0.0.1): "save this card" on an order that names a customer, one-click payment with
 * the saved card on the next order, and a saved card whose issuer asks for 3-D Secure going through
 * the issuer's page again (3-D Secure by redirect). Every page is checked with axe-core, for CSP and
 * script errors, and for requests leaving 127.0.0.1.
 */
import { randomBytes } from 'node:crypto';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningService } from '../server/service.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { axeViolations, launchBrowser } from './support/browser.ts';
import { freePort } from './support/nats-server.ts';
import { startHarness, type Harness } from './support/webhooks.ts';
import { orderBody } from './support/order-fixtures.ts';
import { requires } from './support/requirements.ts';

const WAIT_MS = 10_000;
const twoYearsAhead = String((new Date().getUTCFullYear() + 2) % 100).padStart(2, '0');

let harness: Harness;
let service: RunningService;
let base: string;
let shop: SandboxCredentials;
let browser: Browser;

beforeAll(async () => {
  // The service on a port of its own, its checkout URLs on that port, a vault key of its own.
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  harness = await startHarness({ env: { PORT: String(port), PUBLIC_URL: base, CHECKOUT_URL: base, VAULT_KEYS: `e2e:${randomBytes(32).toString('base64')}` } });
  service = harness.service;
  shop = (await service.core.createSandbox({ name: 'Vault Tea Shop', settlementCurrency: 'EUR' }))!;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  const broken = await service?.core.ledger.verify();
  await harness?.close().catch(() => undefined);
  if (broken) throw new Error(`ledger invariant broken: ${broken.invariant}: ${broken.detail}`);
});

async function api<T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${shop.test_secret_key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = (await res.json()) as T;
  expect(res.ok, JSON.stringify(json)).toBe(true);
  return json;
}

interface RestOrder {
  id: string;
  reference: string;
  status: string;
  checkout_url: string;
  attempts: Array<{ status: string; authentication: string; card: string | null; card_last4: string | null }>;
}

const testCard = (behaviour: string) => shop.test_cards.find((c) => c.behaviour === behaviour)!.number;

interface Visit {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly problems: string[];
}

async function open(order: RestOrder): Promise<Visit> {
  const context = await browser.newContext({ locale: 'en-US', timezoneId: 'Europe/Berlin' });
  context.setDefaultTimeout(WAIT_MS);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${String(err)}`));
  context.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol !== 'data:' && url.hostname !== '127.0.0.1') problems.push(`foreign request: ${req.url()}`);
  });
  await page.goto(order.checkout_url);
  return { context, page, problems };
}

async function finish(visit: Visit): Promise<void> {
  await visit.context.close();
  expect(visit.problems, 'console errors, CSP violations, page errors or requests leaving 127.0.0.1').toEqual([]);
}

async function expectAccessible(page: Page, state: string): Promise<void> {
  const violations = await axeViolations(page);
  expect(violations, `axe violations on the ${state}:\n${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

async function typeCard(page: Page, number: string): Promise<void> {
  await page.getByLabel('Card number', { exact: true }).pressSequentially(number);
  await page.getByLabel('Expiry date (MM/YY)').pressSequentially(`12/${twoYearsAhead}`);
  await page.getByLabel('Security code (CVC)').pressSequentially('123');
  await page.getByLabel('Name on card').pressSequentially('Ada Lovelace');
}

const paid = (page: Page) => page.getByRole('heading', { level: 1, name: 'Payment successful' }).waitFor();

describe('saved cards on the hosted checkout', requires('chromium'), () => {
  test('"save this card", then one-click payment with it on the next order', async () => {
    const customer = await api<{ id: string }>('POST', '/v1/customers', { email: 'ada@example.com', name: 'Ada' });
    const first = await api<RestOrder>('POST', '/v1/orders', orderBody({ reference: 'SAVE-1', customer: customer.id }));
    const number = testCard('approved');

    const visit = await open(first);
    const { page } = visit;
    await page.getByRole('heading', { level: 1, name: 'Pay Vault Tea Shop' }).waitFor();
    expect(await page.getByRole('region', { name: 'Your saved cards' }).count(), 'no saved cards yet').toBe(0);
    const save = page.getByRole('checkbox', { name: 'Save this card for future payments' });
    expect(await save.isChecked()).toBe(false);
    await expectAccessible(page, 'payment page with "save this card"');
    await typeCard(page, number);
    await save.check();
    await page.getByRole('button', { name: 'Pay €25.00', exact: true }).click();
    await paid(page);
    await finish(visit);

    const cards = await api<{ data: Array<{ id: string; last4: string; brand: string; exp_month: number }> }>('GET', `/v1/customers/${customer.id}/cards`);
    expect(cards.data).toHaveLength(1);
    expect(cards.data[0]).toMatchObject({ brand: 'visa', last4: number.slice(-4), exp_month: 12 });
    const savedId = cards.data[0]!.id;
    expect(await service.knex('vault_tokens').where({ order_id: first.id }), 'the held card is gone once saved').toHaveLength(0);

    const second = await api<RestOrder>('POST', '/v1/orders', orderBody({ reference: 'ONE-CLICK-1', customer: customer.id }));
    const again = await open(second);
    const saved = again.page.getByRole('region', { name: 'Your saved cards' });
    const oneClick = saved.getByRole('button', { name: `Pay €25.00 with Visa •••• ${number.slice(-4)} (expires 12/${twoYearsAhead})` });
    await oneClick.waitFor();
    await expectAccessible(again.page, 'payment page with saved cards');
    expect(await again.page.content(), 'the page shows no more of the number than its last four digits').not.toContain(number.slice(0, 12));
    await oneClick.click();
    await paid(again.page);
    await finish(again);

    const order = await api<RestOrder>('GET', `/v1/orders/${second.id}`);
    expect(order.status).toBe('paid');
    expect(order.attempts).toHaveLength(1);
    expect(order.attempts[0]).toMatchObject({ status: 'succeeded', card: savedId, card_last4: number.slice(-4) });
    // The same card saved again from a later order is not saved twice.
    expect((await api<{ data: unknown[] }>('GET', `/v1/customers/${customer.id}/cards`)).data).toHaveLength(1);
  });

  test('a saved card whose issuer asks for 3-D Secure is challenged again on the page', async () => {
    const customer = await api<{ id: string }>('POST', '/v1/customers', { name: 'Grace' });
    const number = testCard('challenge');
    const card = await api<{ id: string }>('POST', `/v1/customers/${customer.id}/cards`, { card: { number, exp_month: 12, exp_year: 2000 + Number(twoYearsAhead), cvc: '123', name: 'Grace Hopper' } });
    const order = await api<RestOrder>('POST', '/v1/orders', orderBody({ reference: 'ONE-CLICK-3DS', customer: customer.id }));

    const visit = await open(order);
    const { page } = visit;
    await page.getByRole('button', { name: new RegExp(`Mastercard •••• ${number.slice(-4)}`) }).click();
    // 3-D Secure by redirect: the issuer's page, then back through the return leg.
    await page.waitForURL('**/simulator/issuer/**', { timeout: WAIT_MS });
    await page.getByRole('heading', { level: 1, name: 'Confirm your payment' }).waitFor();
    await expectAccessible(page, 'issuer page of a saved card');
    await page.getByLabel('Verification code').pressSequentially('123456');
    await page.getByRole('button', { name: 'Confirm' }).click();
    await paid(page);
    await finish(visit);

    const after = await api<RestOrder>('GET', `/v1/orders/${order.id}`);
    expect(after.status).toBe('paid');
    expect(after.attempts[0]).toMatchObject({ status: 'succeeded', authentication: 'passed', card: card.id });
  });
});
