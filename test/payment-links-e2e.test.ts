/**
 * A single-use payment link raced by two customers in Debian's Chromium: the real service
 * (Postgres, core, gateway, outbox relay) listens on a local port; two browser contexts open the
 * link's URL (its payment form: no order exists yet), fill the card form, and click Pay at the
 * same moment (each Pay starts an order of its own, then pays it). Exactly one pays; the other is
 * told the link was just used and is not charged. A collecting link: a declined customer stays on
 * their order, the wallet pays it, and the bank transfer button opens a new order's bank details.
 * Every page is checked for accessibility (axe-core), CSP and script errors, and requests
 * leaving 127.0.0.1; the ledger is verified at the end.
 */
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RunningService } from '../server/service.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { axeViolations, launchBrowser } from './support/browser.ts';
import { freePort } from './support/nats-server.ts';
import { startHarness, type Harness } from './support/webhooks.ts';
import { requires } from './support/requirements.ts';

const SHOP = 'Link Tea Shop';
const WAIT_MS = 15_000;

let harness: Harness;
let service: RunningService;
let base: string;
let shop: SandboxCredentials;
let browser: Browser;

beforeAll(async () => {
  // The service on a port of its own, its checkout URLs on that port (test/support/webhooks.ts).
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  harness = await startHarness({ env: { PORT: String(port), PUBLIC_URL: base, CHECKOUT_URL: base } });
  service = harness.service;
  shop = (await service.core.createSandbox({ name: SHOP, settlementCurrency: 'EUR' }))!;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await harness?.close().catch(() => undefined);
});

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${shop.test_secret_key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json()) as T };
}

interface Customer {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly problems: string[];
  /** Responses with an error status, as "<path> <status>". */
  readonly failedResponses: string[];
}

/** A fresh browser context (its own cookies) opening `url`. */
async function customerAt(url: string, locale = 'en-US'): Promise<Customer> {
  const context = await browser.newContext({ locale, timezoneId: 'Europe/Berlin' });
  context.setDefaultTimeout(WAIT_MS);
  const page = await context.newPage();
  const customer: Customer = { context, page, problems: [], failedResponses: [] };
  page.on('console', (msg) => {
    // Chromium logs every error response; those are checked one by one in failedResponses.
    if (msg.type() === 'error' && !/^Failed to load resource: the server responded with a status of/.test(msg.text())) customer.problems.push(`console: ${msg.text()}`);
  });
  page.on('response', (res) => {
    if (res.status() >= 400) customer.failedResponses.push(`${new URL(res.url()).pathname} ${res.status()}`);
  });
  page.on('pageerror', (err) => customer.problems.push(`page error: ${String(err)}`));
  page.on('dialog', (dialog) => {
    customer.problems.push(`dialog: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  context.on('request', (req) => {
    const target = new URL(req.url());
    if (target.protocol !== 'data:' && target.hostname !== '127.0.0.1') customer.problems.push(`foreign request: ${req.url()}`);
  });
  await page.goto(url);
  return customer;
}

async function expectAccessible(page: Page, state: string): Promise<void> {
  expect(await axeViolations(page), `axe violations on the ${state}`).toEqual([]);
}

const twoYearsAhead = String((new Date().getFullYear() + 2) % 100).padStart(2, '0');

async function typeCard(page: Page, number: string): Promise<void> {
  await page.getByLabel('Card number', { exact: true }).pressSequentially(number);
  await page.getByLabel('Expiry date (MM/YY)').pressSequentially(`12/${twoYearsAhead}`);
  await page.getByLabel('Security code (CVC)').pressSequentially('123');
  await page.getByLabel('Name on card').pressSequentially('Ada Lovelace');
}

const payButton = (page: Page) => page.getByRole('button', { name: 'Pay €25.00', exact: true });
const cardStatus = (page: Page): Locator => page.getByRole('region', { name: 'Pay by card' }).getByRole('status');
const USED = 'This payment link has just been used by someone else';

interface RestOrder {
  id: string;
  status: string;
  payment_link: string | null;
  attempts: unknown[];
}

describe('payment links in the browser', requires('chromium'), () => {
  test('both customers click Pay at the same moment: exactly one pays, the other is told the link was just used and is not charged', async () => {
    const created = await api<{ id: string; url: string }>('POST', '/v1/links', { amount: 2500, currency: 'EUR', reference: 'LINK-RACE', type: 'single_use', return_url: 'http://127.0.0.1:9/thanks' });
    expect(created.status).toBe(201);
    const link = created.json;
    expect(link.url.startsWith(`${base}/l/`)).toBe(true);

    const card = shop.test_cards.find((c) => c.behaviour === 'approved')!;
    const customers = await Promise.all([customerAt(link.url), customerAt(link.url)]);
    try {
      for (const { page } of customers) {
        // The link's own page: the payment form, and no order yet.
        expect(page.url()).toBe(link.url);
        await page.getByRole('heading', { level: 1, name: `Pay ${SHOP}` }).waitFor();
        await typeCard(page, card.number);
      }
      expect((await api<{ data: RestOrder[] }>('GET', `/v1/orders?payment_link=${link.id}`)).json.data).toEqual([]);
      await expectAccessible(customers[0]!.page, 'payment page');

      await Promise.all(customers.map(({ page }) => payButton(page).click()));

      const outcomes = await Promise.all(
        customers.map(async ({ page }) => {
          const paid = page.getByRole('heading', { level: 1, name: 'Payment successful' });
          await paid.or(cardStatus(page).filter({ hasText: USED })).waitFor();
          return (await paid.count()) > 0 ? 'paid' : 'told';
        }),
      );
      expect([...outcomes].sort()).toEqual(['paid', 'told']);
      const loser = customers[outcomes.indexOf('told')]!;
      const winner = customers[outcomes.indexOf('paid')]!;
      expect(await cardStatus(loser.page).innerText()).toContain('You have not been charged.');
      expect(await payButton(loser.page).isDisabled(), 'the form takes no second try').toBe(true);
      await expectAccessible(loser.page, 'payment page after the link was used');
      await expectAccessible(winner.page, 'receipt page');
      // The winner's page became its order's checkout (the receipt is that order's page).
      expect(winner.page.url()).toMatch(new RegExp(`^${base}/c/[0-9A-Za-z]+$`));
      // The loser's one refused call (Connect's failed_precondition, HTTP 400) and nothing else failed: its
      // order's payment when both had started, or its start when the winner's payment was already under way.
      expect(loser.failedResponses).toHaveLength(1);
      expect(['/checkout.v1.CheckoutService/SubmitCardPayment 400', '/checkout.v1.PaymentLinkPageService/StartPayment 400']).toContain(loser.failedResponses[0]);
      expect(winner.failedResponses).toEqual([]);

      const orders = (await api<{ data: RestOrder[] }>('GET', `/v1/orders?payment_link=${link.id}`)).json.data;
      const refusedAtStart = loser.failedResponses[0]!.includes('StartPayment');
      expect(orders.map((o) => o.status).sort()).toEqual(refusedAtStart ? ['paid'] : ['paid', 'pending']);
      expect(orders.every((o) => o.payment_link === link.id)).toBe(true);
      // The loser never reached an acquirer.
      for (const o of orders.filter((o) => o.status === 'pending')) expect(o.attempts).toEqual([]);
      const captures = await service.knex('ledger_transactions').whereIn('order_id', orders.map((o) => o.id)).andWhere({ kind: 'capture' });
      expect(captures).toHaveLength(1);
      expect((await api<{ status: string; completed_payments: number }>('GET', `/v1/links/${link.id}`)).json).toMatchObject({ status: 'completed', completed_payments: 1 });
      expect(await service.core.ledger.verify()).toBeUndefined();
    } finally {
      for (const c of customers) await c.context.close().catch(() => undefined);
    }
    for (const c of customers) expect(c.problems).toEqual([]);

    // Anyone opening the link now is told it has been paid, in their language; nothing is created.
    const before = (await api<{ data: RestOrder[] }>('GET', `/v1/orders?payment_link=${link.id}`)).json.data.length;
    const late = await customerAt(link.url, 'de-DE');
    try {
      await late.page.getByRole('heading', { level: 1, name: 'Dieser Zahlungslink wurde bereits bezahlt' }).waitFor();
      await expectAccessible(late.page, 'already-paid page');
    } finally {
      await late.context.close();
    }
    expect(late.problems).toEqual([]);
    expect(late.failedResponses).toEqual([]);
    expect((await api<{ data: RestOrder[] }>('GET', `/v1/orders?payment_link=${link.id}`)).json.data).toHaveLength(before);
    // Two browsers, four accessibility scans: longer than the default 30 s on a busy machine.
  }, 90_000);

  test('a collecting link: a declined card leaves the customer on their own order (a reload shows it), the wallet pays, the bank transfer button opens an order\'s bank details', async () => {
    const link = (await api<{ id: string; url: string }>('POST', '/v1/links', { amount: 2500, currency: 'EUR', reference: 'LINK-MANY', type: 'collecting' })).json;
    const ordersOfLink = async () => (await api<{ data: RestOrder[] }>('GET', `/v1/orders?payment_link=${link.id}`)).json.data;

    const first = await customerAt(link.url);
    try {
      await expectAccessible(first.page, 'link payment page');
      await typeCard(first.page, shop.test_cards.find((c) => c.behaviour === 'hard_decline')!.number);
      await payButton(first.page).click();
      await cardStatus(first.page).filter({ hasText: 'Try another card' }).waitFor();
      // The first Pay started the customer's order and moved the page to it.
      const [order] = await ordersOfLink();
      expect(order).toMatchObject({ status: 'failed', payment_link: link.id });
      expect(first.page.url()).toBe(`${base}/c/${order!.id.slice(4)}`);
      // A reload shows that order with its failure, not a fresh form.
      await first.page.reload();
      await first.page.locator('#last-failure').waitFor();
      await first.page.getByRole('button', { name: 'Pay with Test Wallet' }).click();
      await first.page.getByRole('heading', { level: 1, name: 'Payment successful' }).waitFor();
      expect((await ordersOfLink()).map((o) => [o.id, o.status])).toEqual([[order!.id, 'paid']]);
    } finally {
      await first.context.close();
    }
    expect(first.problems).toEqual([]);

    const second = await customerAt(link.url, 'de-DE');
    try {
      await second.page.getByRole('button', { name: 'Bankverbindung anzeigen' }).click();
      // The order's page, with its account and the reference to quote.
      await second.page.locator('dt', { hasText: 'IBAN' }).waitFor();
      expect(await second.page.locator('dt', { hasText: 'Verwendungszweck' }).locator('xpath=following-sibling::dd[1]').innerText()).toBe('LINK-MANY');
      const orders = await ordersOfLink();
      expect(orders).toHaveLength(2);
      expect(second.page.url()).toBe(`${base}/c/${orders[0]!.id.slice(4)}`);
      await expectAccessible(second.page, 'bank details of a link order');
    } finally {
      await second.context.close();
    }
    expect(second.problems).toEqual([]);
    expect(second.failedResponses).toEqual([]);
  }, 90_000);

  test('a deactivated link shows a clear, accessible page and creates no order', async () => {
    const link = (await api<{ id: string; url: string }>('POST', '/v1/links', { amount: 2500, currency: 'EUR', reference: 'LINK-OFF', type: 'collecting' })).json;
    expect((await api('POST', `/v1/links/${link.id}/deactivate`)).status).toBe(200);
    const customer = await customerAt(link.url);
    try {
      await customer.page.getByRole('heading', { level: 1, name: 'This payment link is no longer active' }).waitFor();
      await expectAccessible(customer.page, 'deactivated-link page');
    } finally {
      await customer.context.close();
    }
    expect(customer.problems).toEqual([]);
    expect(customer.failedResponses).toEqual([]);
    expect((await api<{ data: unknown[] }>('GET', `/v1/orders?payment_link=${link.id}`)).json.data).toEqual([]);
  });
});
