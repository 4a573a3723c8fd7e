/**
 * The hosted checkout end to end, played as a customer in Debian's Chromium:
 * the real service (Postgres, core, gateway, outbox relay to the machine's
 * JetStream) listens on a local port; each test creates an order over REST,
 * opens its checkout URL in a fresh browser context, types and clicks its way
 * through, then checks the page, the REST order, the JetStream events and the
 * return to the merchant. Every page is also checked for accessibility
 * (axe-core), CSP errors, script errors, alert dialogs and requests leaving 127.0.0.1.
 */
import http from 'node:http';
import type net from 'node:net';
import { connect, type JetStreamManager, type NatsConnection } from 'nats';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startService, type RunningService } from '../server/service.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { loadConfig } from '../src/composition/config.ts';
import { axeViolations, launchBrowser } from './support/browser.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { MACHINE_NATS_URL, uniqueStream, freePort } from './support/nats-server.ts';
import { orderBody } from './support/order-fixtures.ts';
import { requires } from './support/requirements.ts';

const SHOP = 'E2E Tea Shop';
const WAIT_MS = 10_000;
/** Intl puts a no-break space (or narrow one) between amount and symbol in German. */
const spaces = (text: string) => text.replace(/[\u00a0\u202f]/g, ' ');

// ---------------------------------------------------------------------------
// Shared fixtures: database, service, stream, return server, browser

let db: TestDatabase;
let service: RunningService;
let base: string;
let shop: SandboxCredentials;
let browser: Browser;
let nc: NatsConnection;
let jsm: JetStreamManager;
const stream = uniqueStream();

/** URLs (with their query strings) of the requests that reached the merchant's return page. */
const returns: URL[] = [];
let returnServer: http.Server;
let returnBase: string;


beforeAll(async () => {
  db = await createTestDatabase({ migrate: false });
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  service = await startService({
    // Defaults for any setting this test does not care about (from an empty environment, not the machine's).
    ...loadConfig({}),
    databaseUrl: db.url,
    databasePoolMax: 10,
    natsUrl: MACHINE_NATS_URL,
    natsStream: stream.stream,
    natsSubjectPrefix: stream.subjectPrefix,
    port,
    host: '127.0.0.1',
    publicUrl: base,
    checkoutUrl: base,
    logLevel: 'silent',
  });
  shop = (await service.core.createSandbox({ name: SHOP, settlementCurrency: 'EUR' }))!;

  returnServer = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (url.pathname === '/thanks') returns.push(url);
    res.writeHead(url.pathname === '/thanks' ? 200 : 404, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Back at the shop</title></head><body><h1>Thanks</h1></body></html>');
  });
  await new Promise<void>((resolve) => returnServer.listen(0, '127.0.0.1', resolve));
  returnBase = `http://127.0.0.1:${(returnServer.address() as net.AddressInfo).port}`;

  nc = await connect({ servers: MACHINE_NATS_URL, name: 'checkout-e2e-test' });
  jsm = await nc.jetstreamManager();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await service?.close().catch(() => undefined);
  if (returnServer) await new Promise<void>((resolve) => returnServer.close(() => resolve()));
  if (jsm) await jsm.streams.delete(stream.stream).catch(() => undefined);
  await nc?.close().catch(() => undefined);
  await db?.drop().catch(() => undefined);
});

// ---------------------------------------------------------------------------
// REST, events and test cards

interface RestOrder {
  id: string;
  reference: string;
  status: string;
  method?: string;
  checkout_url: string;
  attempts: Array<{ route: string; status: string; decline_code: string | null; retry: boolean; authentication: string; method: string }>;
}

async function api<T>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }> {
  const res = await fetch(base + path, {
    method,
    headers: { authorization: `Bearer ${shop.test_secret_key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json()) as T };
}

let orderCount = 0;
async function createOrder(overrides: Record<string, unknown> = {}): Promise<RestOrder> {
  orderCount += 1;
  const { status, json } = await api<RestOrder>('POST', '/v1/orders', orderBody({ reference: `E2E-${orderCount}`, return_url: `${returnBase}/thanks`, ...overrides }));
  expect(status, JSON.stringify(json)).toBe(201);
  expect(json.checkout_url.startsWith(`${base}/c/`)).toBe(true);
  return json;
}

async function getOrder(id: string): Promise<RestOrder> {
  const { status, json } = await api<RestOrder>('GET', `/v1/orders/${id}`);
  expect(status).toBe(200);
  return json;
}

function testCard(behaviour: string): { number: string; last4: string; cvc: string } {
  const card = shop.test_cards.find((c) => c.behaviour === behaviour);
  if (!card) throw new Error(`no ${behaviour} test card`);
  return { number: card.number, last4: card.number.slice(-4), cvc: card.brand === 'amex' ? '1234' : '123' };
}

interface StreamEvent {
  subject: string;
  type: string;
  order_id: string;
  data: Record<string, unknown> & { reason?: Record<string, unknown> };
}

const seen = new Map<number, StreamEvent>();
/** Every message of the test's stream, fetched once each. */
async function streamEvents(): Promise<StreamEvent[]> {
  const { state } = await jsm.streams.info(stream.stream);
  for (let seq = state.first_seq; state.messages > 0 && seq <= state.last_seq; seq += 1) {
    if (seen.has(seq)) continue;
    const msg = await jsm.streams.getMessage(stream.stream, { seq });
    // The NATS subject it was published on; the envelope's own `subject` (what the event is about) is not read here.
    seen.set(seq, { ...msg.json<Omit<StreamEvent, 'subject'>>(), subject: msg.subject });
  }
  return [...seen.entries()].sort(([a], [b]) => a - b).map(([, e]) => e);
}

/**
 * The order's events on JetStream once the relay has published every one the
 * database holds for it (so counts are final, not a snapshot mid-relay).
 */
async function publishedEvents(orderId: string, atLeast: string[] = []): Promise<StreamEvent[]> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const rows: Array<{ published_at: Date | null }> = await service.knex('events').where({ order_id: orderId }).select('published_at');
    const last = (await streamEvents()).filter((e) => e.order_id === orderId);
    const types = last.map((e) => e.type);
    if (rows.every((r) => r.published_at) && last.length === rows.length && atLeast.every((t) => types.includes(t))) return last;
    if (Date.now() > deadline) throw new Error(`events of ${orderId} not all on the stream in ${WAIT_MS} ms: ${JSON.stringify(types)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// ---------------------------------------------------------------------------
// The customer's browser

interface Customer {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors, uncaught page errors, alert/confirm dialogs and requests that left 127.0.0.1. */
  readonly consoleErrors: string[];
  readonly pageErrors: string[];
  readonly dialogs: string[];
  readonly foreignRequests: string[];
  /** Connect payment calls the page made (method names). */
  readonly paymentCalls: string[];
}

/** Opens the order's checkout in a fresh context, as a customer whose browser speaks `locale`. */
async function openCheckout(order: RestOrder, locale = 'en-US'): Promise<Customer> {
  const context = await browser.newContext({ locale, timezoneId: 'Europe/Berlin' });
  context.setDefaultTimeout(WAIT_MS);
  const customer: Customer = { context, page: await context.newPage(), consoleErrors: [], pageErrors: [], dialogs: [], foreignRequests: [], paymentCalls: [] };
  const { page } = customer;
  page.on('console', (msg) => {
    if (msg.type() === 'error') customer.consoleErrors.push(msg.text());
  });
  page.on('pageerror', (err) => customer.pageErrors.push(String(err)));
  page.on('dialog', (dialog) => {
    customer.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  context.on('request', (req) => {
    const url = new URL(req.url());
    if (url.protocol === 'data:') return;
    if (url.hostname !== '127.0.0.1') customer.foreignRequests.push(req.url());
    const call = /^\/checkout\.v1\.CheckoutService\/(\w+)$/.exec(url.pathname);
    if (call) customer.paymentCalls.push(call[1]!);
  });
  await page.goto(order.checkout_url);
  return customer;
}

/** Closes the context, then asserts the page stayed clean throughout. */
async function finish(customer: Customer): Promise<void> {
  await customer.context.close();
  const csp = customer.consoleErrors.filter((text) => /content security policy|refused to/i.test(text));
  expect(csp, 'CSP violations in the console').toEqual([]);
  expect(customer.consoleErrors, 'console errors').toEqual([]);
  expect(customer.pageErrors, 'uncaught errors in the page').toEqual([]);
  expect(customer.dialogs, 'dialogs opened by the page').toEqual([]);
  expect(customer.foreignRequests, 'requests to hosts other than 127.0.0.1').toEqual([]);
}

/** Runs a test body with a customer on the order's checkout; closes and checks the page afterwards (a failing body's own error wins). */
async function asCustomer(order: RestOrder, play: (c: Customer) => Promise<void>, locale?: string): Promise<void> {
  const customer = await openCheckout(order, locale);
  try {
    await play(customer);
  } catch (err) {
    await customer.context.close().catch(() => undefined);
    throw err;
  }
  await finish(customer);
}

async function expectAccessible(page: Page, state: string): Promise<void> {
  const violations = await axeViolations(page);
  expect(violations, `axe violations on the ${state}:\n${JSON.stringify(violations, null, 2)}`).toEqual([]);
}

const twoYearsAhead = String((new Date().getFullYear() + 2) % 100).padStart(2, '0');

/**
 * Types the card's details key by key, as a customer would; after a decline the
 * page keeps expiry and name (it clears number and code), so those are typed only when empty.
 */
async function typeCard(page: Page, card: { number: string; cvc: string }, name = 'Ada Lovelace'): Promise<void> {
  await page.getByLabel('Card number', { exact: true }).pressSequentially(card.number);
  const expiry = page.getByLabel('Expiry date (MM/YY)');
  if (!(await expiry.inputValue())) await expiry.pressSequentially(`12/${twoYearsAhead}`);
  await page.getByLabel('Security code (CVC)').pressSequentially(card.cvc);
  const nameInput = page.getByLabel('Name on card');
  if (!(await nameInput.inputValue())) await nameInput.pressSequentially(name);
}

const payButton = (page: Page) => page.getByRole('button', { name: 'Pay €25.00', exact: true });
const cardStatus = (page: Page) => page.getByRole('region', { name: 'Pay by card' }).getByRole('status');

/** The <dd> that follows the <dt> with this text. */
function fact(page: Page, term: string): Locator {
  return page.locator('dt', { hasText: new RegExp(`^${term}$`) }).locator('xpath=following-sibling::dd[1]');
}

async function expectReceipt(page: Page, order: RestOrder, paidWith: string): Promise<void> {
  await page.getByRole('heading', { level: 1, name: 'Payment successful' }).waitFor();
  expect(await fact(page, 'Reference').innerText()).toBe(order.reference);
  expect(spaces(await fact(page, 'Amount').innerText())).toBe('€25.00');
  expect(await fact(page, 'Paid with').innerText()).toBe(paidWith);
  expect(await fact(page, 'Order ID').innerText()).toBe(order.id);
  expect(await page.getByRole('button', { name: /^Pay/ }).count(), 'a receipt offers no payment').toBe(0);
}

async function textOf(locator: Locator): Promise<string> {
  return spaces((await locator.innerText()).trim());
}

// ---------------------------------------------------------------------------

describe('hosted checkout in a real browser', requires('chromium', 'nats'), () => {
  test('approved card: receipt, REST paid, order.paid on JetStream, and back to the shop with order_id and reference', async () => {
    const order = await createOrder();
    const card = testCard('approved');
    await asCustomer(order, async ({ page }) => {
      await page.getByRole('heading', { level: 1, name: `Pay ${SHOP}` }).waitFor();
      await expectAccessible(page, 'payment page');
      await typeCard(page, card);
      expect(await page.getByLabel('Card number', { exact: true }).inputValue(), 'grouped on leaving the field').toBe(card.number.replace(/(\d{4})(?=\d)/g, '$1 '));
      await payButton(page).click();
      await expectReceipt(page, order, `Visa ending in ${card.last4}`);
      await expectAccessible(page, 'receipt page');

      const paid = await getOrder(order.id);
      expect(paid).toMatchObject({ status: 'paid', method: 'card' });
      const events = await publishedEvents(order.id, ['order.paid']);
      expect(events.map((e) => e.type)).toEqual(['order.created', 'order.paid']);
      const paidEvent = events[1]!;
      expect(paidEvent.subject).toBe(`${stream.subjectPrefix}.order.paid`);
      expect(paidEvent.data).toEqual({ id: order.id, reference: order.reference, amount: 2500, currency: 'EUR', method: 'card', settlement: { currency: 'EUR', amount: 2440 } });

      await page.getByRole('link', { name: `Return to ${SHOP}` }).click();
      await page.waitForURL(`${returnBase}/thanks?**`);
      const back = returns.find((u) => u.searchParams.get('order_id') === order.id);
      expect(back?.searchParams.get('reference')).toBe(order.reference);
    });
  });

  test('3-D Secure challenge passed with 123456: the page goes to the issuer, comes back by the return leg, paid', async () => {
    const order = await createOrder();
    await asCustomer(order, async ({ page }) => {
      await typeCard(page, testCard('challenge'));
      await payButton(page).click();
      // 3-D Secure is a redirect: the whole page goes to the (simulated) issuer's page on our host.
      await page.waitForURL('**/simulator/issuer/**', { timeout: WAIT_MS });
      await page.getByRole('heading', { level: 1, name: 'Confirm your payment' }).waitFor();
      expect(await page.locator('#challenge-hint').innerText()).toContain('123456');
      expect(await page.locator('.test-mode').innerText()).toContain('Test mode');
      await expectAccessible(page, 'issuer page');
      await page.getByLabel('Verification code').pressSequentially('123456');
      await page.getByRole('button', { name: 'Confirm' }).click();
      // The issuer sends the customer to the return leg, which completes the payment and shows the receipt.
      await expectReceipt(page, order, `Mastercard ending in ${testCard('challenge').last4}`);
      expect(new URL(page.url()).pathname).toBe(`/c/${order.id.slice(4)}`);
    });
    const paid = await getOrder(order.id);
    expect(paid.status).toBe('paid');
    expect(paid.attempts).toHaveLength(1);
    expect(paid.attempts[0]).toMatchObject({ status: 'succeeded', authentication: 'passed' });
  });

  test('3-D Secure challenge failed: back on the checkout page the failure is shown, then the approved card pays', async () => {
    const order = await createOrder();
    await asCustomer(order, async ({ page }) => {
      await typeCard(page, testCard('challenge'));
      await payButton(page).click();
      await page.waitForURL('**/simulator/issuer/**', { timeout: WAIT_MS });
      await page.getByLabel('Verification code').pressSequentially('000000');
      await page.getByRole('button', { name: 'Confirm' }).click();
      await page.waitForURL(`**/c/${order.id.slice(4)}`, { timeout: WAIT_MS });
      // What a shopper can act on, and no internal counter while many attempts are left.
      await expect.poll(() => textOf(page.locator('#last-failure')), { timeout: WAIT_MS }).toBe('Your last payment attempt failed: Authentication failed. Try again, or use another card.');
      expect((await getOrder(order.id)).status).toBe('failed');

      await typeCard(page, testCard('approved'));
      await payButton(page).click();
      await expectReceipt(page, order, `Visa ending in ${testCard('approved').last4}`);
    });
    const paid = await getOrder(order.id);
    expect(paid.status).toBe('paid');
    expect(paid.attempts.map((a) => [a.status, a.authentication, a.decline_code])).toEqual([
      ['failed', 'failed', 'authentication_failed'],
      ['succeeded', 'not_required', null],
    ]);
    const events = await publishedEvents(order.id, ['order.paid']);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.failed', 'order.paid']);
    expect(events[1]!.data.reason).toMatchObject({ decline_code: 'authentication_failed' });
  });

  test('soft decline: recovered on the alternative route and paid', async () => {
    const order = await createOrder();
    const card = testCard('soft_decline');
    await asCustomer(order, async ({ page }) => {
      await typeCard(page, card);
      await payButton(page).click();
      await expectReceipt(page, order, `Visa ending in ${card.last4}`);
    });
    const paid = await getOrder(order.id);
    expect(paid.status).toBe('paid');
    expect(paid.attempts.map((a) => [a.route, a.status, a.decline_code, a.retry])).toEqual([
      ['simulated_alpha', 'failed', 'insufficient_funds', false],
      ['simulated_beta', 'succeeded', null, true],
    ]);
  });

  test('hard decline: the expired-card message, order failed, order.failed with decline_code expired_card', async () => {
    const order = await createOrder();
    await asCustomer(order, async ({ page }) => {
      await typeCard(page, testCard('hard_decline'));
      await payButton(page).click();
      await expect.poll(() => textOf(cardStatus(page)), { timeout: WAIT_MS }).toBe('The card has expired. Try another card.');
      expect(await page.getByLabel('Card number', { exact: true }).evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement), 'focus back on the card number').toBe(true);
      expect(await payButton(page).isEnabled(), 'the customer can try another card').toBe(true);
      // Coming back later, the page says the same as the script did.
      await page.reload();
      expect(await page.locator('#last-failure p').allInnerTexts()).toEqual(['Your last payment attempt failed: The card has expired. Try another card.']);
    });
    expect((await getOrder(order.id)).status).toBe('failed');
    const events = await publishedEvents(order.id, ['order.failed']);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.failed']);
    expect(events[1]!.subject).toBe(`${stream.subjectPrefix}.order.failed`);
    expect(events[1]!.data.reason).toMatchObject({ decline_code: 'expired_card' });
  });

  test('wallet button: paid with method wallet', async () => {
    const order = await createOrder();
    await asCustomer(order, async ({ page }) => {
      await page.getByRole('button', { name: 'Pay with Test Wallet' }).click();
      await expectReceipt(page, order, 'Wallet');
    });
    expect(await getOrder(order.id)).toMatchObject({ status: 'paid', method: 'wallet' });
  });

  test('bank transfer: IBAN and reference on the panel; the simulated transfer arrives; reload shows the receipt', async () => {
    const order = await createOrder();
    await asCustomer(order, async ({ page }) => {
      const panel = page.getByRole('region', { name: 'Bank transfer' });
      expect(await fact(page, 'IBAN').innerText()).toMatch(/^[A-Z]{2}\d{2}( [A-Z0-9]{1,4})+$/);
      expect(await panel.innerText()).toContain('Reference to quote');
      expect(await fact(page, 'Reference to quote').innerText()).toBe(order.reference);

      const transfer = await api<RestOrder>('POST', `/v1/test_helpers/orders/${order.id}/simulate_transfer`);
      expect(transfer.status).toBe(200);
      await page.reload();
      await expectReceipt(page, order, 'Bank transfer');
    });
    expect(await getOrder(order.id)).toMatchObject({ status: 'paid', method: 'bank_transfer' });
    const events = await publishedEvents(order.id, ['order.paid']);
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.paid']);
    expect(events[1]!.data).toMatchObject({ id: order.id, method: 'bank_transfer' });
  });

  test('markup in the reference and line item names is shown as text, never run', async () => {
    const script = '<script>alert(1)</script>';
    const img = '"><img src=x onerror=alert(1)>';
    const order = await createOrder({
      reference: `INV ${script} ${img}`,
      line_items: [
        { name: `Tea ${script}`, amount: 1500 },
        { name: `Pot ${img}`, amount: 1000 },
      ],
    });
    await asCustomer(order, async (customer) => {
      const { page } = customer;
      const summary = page.getByRole('region', { name: 'Order summary' });
      const text = await summary.innerText();
      expect(text).toContain(`INV ${script} ${img}`);
      expect(text).toContain(`Tea ${script}`);
      expect(text).toContain(`Pot ${img}`);
      expect(await page.locator('script').count(), 'only the page script').toBe(1);
      expect(await page.locator('img').count()).toBe(0);
      expect(await page.locator('[onerror]').count()).toBe(0);

      await page.getByRole('button', { name: 'Pay with Test Wallet' }).click();
      await page.getByRole('heading', { level: 1, name: 'Payment successful' }).waitFor();
      expect(await fact(page, 'Reference').innerText()).toBe(order.reference);
      expect(await page.locator('script').count()).toBe(1);
      expect(await page.locator('img').count()).toBe(0);
      const returnLink = await page.getByRole('link', { name: `Return to ${SHOP}` }).getAttribute('href');
      expect(new URL(returnLink!).searchParams.get('reference')).toBe(order.reference);
      await page.waitForTimeout(100); // a deferred onerror would have fired by now
      expect(customer.dialogs).toEqual([]);
    });
  });

  test('a double click on Pay charges once: one succeeded attempt, one order.paid', async () => {
    const order = await createOrder();
    await asCustomer(order, async (customer) => {
      const { page } = customer;
      await typeCard(page, testCard('approved'));
      await payButton(page).dblclick();
      await expectReceipt(page, order, `Visa ending in ${testCard('approved').last4}`);
      expect(customer.paymentCalls.filter((m) => m === 'SubmitCardPayment')).toHaveLength(1);
    });
    const paid = await getOrder(order.id);
    expect(paid.attempts.filter((a) => a.status === 'succeeded')).toHaveLength(1);
    expect(paid.attempts).toHaveLength(1);
    const events = await publishedEvents(order.id, ['order.paid']);
    expect(events.filter((e) => e.type === 'order.paid')).toHaveLength(1);
  });

  test('German: Accept-Language de shows German labels, "25,00 €", and declines in German before and after a reload', async () => {
    const order = await createOrder();
    await asCustomer(
      order,
      async ({ page }) => {
        expect(await page.locator('html').getAttribute('lang')).toBe('de-DE');
        await page.getByRole('heading', { level: 1, name: `${SHOP} bezahlen` }).waitFor();
        expect(await page.getByRole('region', { name: 'Bestellübersicht' }).count()).toBe(1);
        expect(await page.getByRole('heading', { name: 'Mit Karte bezahlen' }).count()).toBe(1);
        for (const label of ['Kartennummer', 'Gültig bis (MM/JJ)', 'Prüfnummer (CVC)', 'Name auf der Karte']) {
          expect(await page.getByLabel(label, { exact: true }).count(), label).toBe(1);
        }
        const pay = page.getByRole('button', { name: /bezahlen$/ }).first();
        expect(spaces((await pay.innerText()).trim())).toBe('25,00 € bezahlen');
        expect(spaces(await page.getByRole('row', { name: /Gesamt/ }).innerText())).toContain('25,00 €');
        await expectAccessible(page, 'German payment page');

        const number = page.getByLabel('Kartennummer', { exact: true });
        await number.pressSequentially('4242');
        await number.press('Tab');
        expect(await page.locator('#cc-number-error').innerText()).toBe('Diese Kartennummer ist ungültig. Bitte prüfen Sie die Ziffern.');

        // A decline, then the same page later: German both times, never the core's English text.
        await number.selectText();
        await number.press('Backspace');
        await number.pressSequentially(testCard('hard_decline').number);
        await page.getByLabel('Gültig bis (MM/JJ)').pressSequentially(`12/${twoYearsAhead}`);
        await page.getByLabel('Prüfnummer (CVC)').pressSequentially('123');
        await page.getByLabel('Name auf der Karte').pressSequentially('Ada Lovelace');
        await page.getByLabel('Name auf der Karte').press('Enter');
        const status = page.getByRole('region', { name: 'Mit Karte bezahlen' }).getByRole('status');
        await expect.poll(() => textOf(status), { timeout: WAIT_MS }).toBe('Die Karte ist abgelaufen. Versuchen Sie es mit einer anderen Karte.');
        await page.reload();
        expect(await page.locator('#last-failure p').allInnerTexts()).toEqual(['Ihr letzter Zahlungsversuch ist fehlgeschlagen: Die Karte ist abgelaufen. Versuchen Sie es mit einer anderen Karte.']);
      },
      'de-DE',
    );
  });

  test('client-side validation: an invalid card number is flagged on its field and nothing is submitted', async () => {
    const order = await createOrder();
    await asCustomer(order, async (customer) => {
      const { page } = customer;
      const number = page.getByLabel('Card number', { exact: true });
      const valid = testCard('approved').number;
      const wrongDigit = valid.slice(0, -1) + String((Number(valid.at(-1)) + 1) % 10);
      await typeCard(page, { number: wrongDigit, cvc: '123' });
      await payButton(page).click();

      expect(await number.getAttribute('aria-invalid')).toBe('true');
      const errorId = (await number.getAttribute('aria-describedby'))!.split(/\s+/).find((id) => id.endsWith('-error'))!;
      expect(await page.locator(`[id="${errorId}"]`).innerText()).toBe('This card number is not valid. Check the digits.');
      expect(await number.evaluate((el) => el === (el.ownerDocument as unknown as { activeElement: unknown }).activeElement), 'focus on the invalid field').toBe(true);
      expect(await textOf(cardStatus(page))).toBe('Please correct the highlighted fields.');
      for (const other of ['Expiry date (MM/YY)', 'Security code (CVC)', 'Name on card']) {
        expect(await page.getByLabel(other).getAttribute('aria-invalid'), other).toBeNull();
      }
      await expectAccessible(page, 'payment page with a field error');
      expect(customer.paymentCalls).toEqual([]);

      // Fixing the number clears the error as the customer types.
      await number.selectText();
      await number.press('Backspace');
      await number.pressSequentially(valid);
      expect(await number.getAttribute('aria-invalid')).toBeNull();
      expect(customer.paymentCalls).toEqual([]);
    });
    const after = await getOrder(order.id);
    expect(after.status).toBe('pending');
    expect(after.attempts).toEqual([]);
  });
});
