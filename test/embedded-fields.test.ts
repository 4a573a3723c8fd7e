/**
 * The embedded card fields in Debian's Chromium: the real service (Postgres, core, gateway, outbox relay) listens on
 * 127.0.0.1 as the checkout host; a merchant's page is served from 127.0.0.2 (another origin, and another site) and
 * mounts the three field frames with the order's client secret. Each card path of the sandbox ends with the order
 * read back through the REST API; a script of the merchant's page cannot read the card number; axe-core finds no
 * violations inside the frames.
 */
import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Frame, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { axeViolations, launchBrowser } from './support/browser.ts';
import { freePort } from './support/nats-server.ts';
import { api, startHarness, type Harness } from './support/webhooks.ts';
import { orderBody } from './support/order-fixtures.ts';
import { requires } from './support/requirements.ts';

const WAIT_MS = 20_000;
const MERCHANT_HOST = '127.0.0.2';

let h: Harness;
let base: string;
let merchant: Server;
let merchantUrl: string;
let browser: Browser;

/** The merchant's page: no CSP of its own, a script that records every message and every field event it gets. */
function merchantPage(checkoutBase: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tea shop: pay</title><link rel="icon" href="data:,"></head>
<body>
<main>
<h1>Pay for your tea</h1>
<div id="number"></div><div id="expiry"></div><div id="cvc"></div>
</main>
<script src="${checkoutBase}/js/fields.js"></script>
<script>
window.received = [];
window.addEventListener('message', (e) => window.received.push({ origin: e.origin, data: JSON.stringify(e.data) }));
window.events = [];
window.setup = (publishableKey, clientSecret) => {
  const fields = CheckoutFields({ publishableKey, clientSecret, style: { color: '#1a1a1a', fontSize: '16px', fontFamily: 'system-ui', placeholderColor: '#595959' } });
  const mounted = [['cardNumber', '#number'], ['cardExpiry', '#expiry'], ['cardCvc', '#cvc']].map(([kind, at]) => {
    const field = fields.create(kind, kind === 'cardNumber' ? { ariaLabel: 'Numéro de carte' } : {});
    for (const name of ['change', 'focus', 'blur', 'error']) field.on(name, (payload) => window.events.push({ kind, name, payload: payload === undefined ? null : JSON.stringify(payload) }));
    return new Promise((resolve) => field.on('ready', resolve).mount(at));
  });
  window.fields = fields;
  window.elements = mounted;
  return Promise.all(mounted).then(() => true);
};
</script>
</body>
</html>
`;
}

beforeAll(async () => {
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  h = await startHarness({ env: { PORT: String(port), PUBLIC_URL: base, CHECKOUT_URL: base, CARD_VELOCITY_PER_ADDRESS: '0' } });
  const html = merchantPage(base);
  merchant = http.createServer((req, res) => {
    if (req.url !== '/pay') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
  });
  await new Promise<void>((resolve) => merchant.listen(0, MERCHANT_HOST, resolve));
  merchantUrl = `http://${MERCHANT_HOST}:${(merchant.address() as AddressInfo).port}/pay`;
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await new Promise((resolve) => merchant?.close(resolve));
  await h?.close().catch(() => undefined);
});

interface OrderView { id: string; status: string; attempts: Array<{ status: string; route: string; decline_code: string | null; retry: boolean }> }

async function retrieve(id: string): Promise<OrderView> {
  const res = await api<OrderView>(base, h.sandbox.test_secret_key, 'GET', `/v1/orders/${id}`);
  expect(res.status).toBe(200);
  return res.json;
}

function testCard(behaviour: string): string {
  const c = h.sandbox.test_cards.find((t) => t.behaviour === behaviour);
  if (!c) throw new Error(`no ${behaviour} test card`);
  return c.number;
}

interface Shopper {
  readonly context: BrowserContext;
  readonly page: Page;
  readonly problems: string[];
  readonly order: { id: string; client_secret: string };
}

/** A new order, and a fresh browser context on the merchant's page with the fields mounted for it. */
async function shopper(reference: string): Promise<Shopper> {
  const created = await api<{ id: string; client_secret: string }>(base, h.sandbox.test_secret_key, 'POST', '/v1/orders', orderBody({ reference }));
  expect(created.status).toBe(201);
  const context = await browser.newContext({ locale: 'en-US' });
  context.setDefaultTimeout(WAIT_MS);
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(`console: ${msg.text()}`);
  });
  page.on('pageerror', (err) => problems.push(`page error: ${String(err)}`));
  context.on('request', (req) => {
    const target = new URL(req.url());
    if (target.protocol !== 'data:' && !['127.0.0.1', MERCHANT_HOST].includes(target.hostname)) problems.push(`foreign request: ${req.url()}`);
  });
  await page.goto(merchantUrl);
  const ready = await page.evaluate(([pk, secret]) => (globalThis as unknown as { setup: (a: string, b: string) => Promise<boolean> }).setup(pk!, secret!), [h.sandbox.test_publishable_key, created.json.client_secret]);
  expect(ready).toBe(true);
  return { context, page, problems, order: created.json };
}

const frameOf = (page: Page, path: string): Frame => {
  const frame = page.frames().find((f) => new URL(f.url()).pathname === path);
  if (!frame) throw new Error(`no frame ${path}`);
  return frame;
};

async function fillCard(page: Page, number: string, expiry = `12 / ${(new Date().getUTCFullYear() + 2) % 100}`, cvc = '123'): Promise<void> {
  await page.frameLocator('#number iframe').locator('input').fill(number);
  await page.frameLocator('#expiry iframe').locator('input').fill(expiry);
  await page.frameLocator('#cvc iframe').locator('input').fill(cvc);
}

type Result = { status: string; orderId?: string; code?: string; message?: string; attemptsRemaining?: number };
const confirm = (page: Page): Promise<Result> => page.evaluate(() => (globalThis as unknown as { fields: { confirm: (o: { name: string }) => Promise<Result> } }).fields.confirm({ name: 'Ada Lovelace' }));

/** Asserts that nothing the merchant's page received or rendered holds the card number. */
async function assertNumberNeverReachedThePage(page: Page, number: string): Promise<void> {
  const seen = await page.evaluate(() => {
    const g = globalThis as unknown as { received: unknown[]; events: unknown[]; document: { documentElement: { outerHTML: string } } };
    return JSON.stringify({ received: g.received, events: g.events, html: g.document.documentElement.outerHTML });
  });
  expect(seen.length).toBeGreaterThan(100);
  expect(seen).not.toContain(number);
  for (let i = 0; i + 8 <= number.length; i += 4) expect(seen).not.toContain(number.slice(i, i + 8));
}

describe('the embedded card fields on a merchant page of another origin', requires('chromium'), () => {
  it('pay with the approved card, and the page can read neither the frames nor the digits', async () => {
    const s = await shopper('fields-approved');
    const number = testCard('approved');
    await fillCard(s.page, number);
    await s.page.frameLocator('#number iframe').locator('input').blur();

    // The page's own script: the frames' documents are out of its reach.
    const reach = await s.page.evaluate(() => {
      const doc = globalThis as unknown as { document: { querySelectorAll: (s: string) => ArrayLike<{ contentDocument: unknown; contentWindow: { document: unknown } }> } };
      return Array.from(doc.document.querySelectorAll('iframe')).map((f) => {
        let threw = false;
        try {
          void f.contentWindow.document;
        } catch {
          threw = true;
        }
        return { contentDocument: f.contentDocument, threw };
      });
    });
    expect(reach).toEqual([
      { contentDocument: null, threw: true },
      { contentDocument: null, threw: true },
      { contentDocument: null, threw: true },
    ]);

    // change events carry state only: complete, brand.
    const events = await s.page.evaluate(() => (globalThis as unknown as { events: Array<{ kind: string; name: string; payload: string | null }> }).events);
    const lastChange = events.filter((e) => e.kind === 'cardNumber' && e.name === 'change').at(-1);
    expect(JSON.parse(lastChange!.payload!)).toEqual({ elementType: 'cardNumber', empty: false, complete: true, brand: 'visa' });
    expect(events.some((e) => e.kind === 'cardNumber' && e.name === 'focus')).toBe(true);

    const result = await confirm(s.page);
    expect(result).toEqual({ status: 'paid', orderId: s.order.id });
    expect((await retrieve(s.order.id)).status).toBe('paid');

    await assertNumberNeverReachedThePage(s.page, number);
    // Every message the page received came from the checkout host.
    const origins = await s.page.evaluate(() => (globalThis as unknown as { received: Array<{ origin: string }> }).received.map((r) => r.origin));
    expect(new Set(origins)).toEqual(new Set([base]));
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it("follow the 3-D Secure redirect in the overlay: the issuer's page, framed by the merchant's origin alone, fails then passes", async () => {
    const s = await shopper('fields-challenge');
    const number = testCard('challenge');
    const merchantOrigin = new URL(merchantUrl).origin;
    await fillCard(s.page, number);
    const issuerPage = s.page.waitForResponse((r) => new URL(r.url()).pathname.startsWith('/simulator/issuer/') && r.request().method() === 'GET');
    const startConfirm = () =>
      s.page.evaluate(() => {
        const g = globalThis as unknown as { fields: { confirm: (o: { name: string }) => Promise<unknown> }; pending: Promise<unknown>; settled: boolean };
        g.settled = false;
        g.pending = g.fields.confirm({ name: 'Ada Lovelace' }).finally(() => (g.settled = true));
      });
    await startConfirm();
    const challenge = s.page.frameLocator('[role=dialog] iframe');
    await expect.poll(() => challenge.locator('#challenge-hint').textContent(), { timeout: WAIT_MS }).toContain('123456');
    // The issuer's page itself (the simulator's, on the checkout host), which may be framed by this origin and no other.
    const issuer = await issuerPage;
    expect(new URL(issuer.url()).origin).toBe(base);
    const csp = (await issuer.allHeaders())['content-security-policy']!;
    expect(csp).toContain(`frame-ancestors ${merchantOrigin};`);
    expect((await issuer.allHeaders())['x-frame-options']).toBeUndefined();
    // Its link is signed with the return leg that names this origin: another origin written into it is refused.
    const forged = new URL(issuer.url());
    forged.searchParams.set('return_url', forged.searchParams.get('return_url')!.replace(encodeURIComponent(merchantOrigin), encodeURIComponent('http://127.0.0.3:1')));
    expect((await fetch(forged)).status).toBe(404);
    const overlay = s.page.frames().find((f) => new URL(f.url()).pathname.startsWith('/simulator/issuer/'))!;
    expect(await axeViolations(overlay)).toEqual([]);
    // A modal: the merchant's page behind it is inert until the step ends.
    expect(await s.page.locator('main').evaluate((el) => (el as unknown as { inert: boolean }).inert)).toBe(true);

    // "Back from the issuer" from another origin (here the merchant's page itself) is not the overlay's: ignored.
    await s.page.evaluate(() => (globalThis as unknown as { postMessage: (m: unknown, o: string) => void }).postMessage({ tag: 'checkout-fields/1', type: 'returned' }, '*'));
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await s.page.evaluate(() => (globalThis as unknown as { settled: boolean }).settled)).toBe(false);
    expect(await s.page.locator('[role=dialog]').count()).toBe(1);

    // A wrong code first: the issuer fails the check, the return leg completes the payment, a decline the customer can act on.
    await challenge.locator('#challenge-code').fill('000000');
    await challenge.locator('#challenge-submit').click();
    const first = (await s.page.evaluate(() => (globalThis as unknown as { pending: Promise<Result> }).pending)) as Result;
    expect(first).toMatchObject({ status: 'declined', code: 'authentication_failed' });
    expect(await s.page.locator('[role=dialog]').count()).toBe(0);
    expect(await s.page.locator('main').evaluate((el) => (el as unknown as { inert: boolean }).inert)).toBe(false);
    // The return page posted "returned" to the merchant's origin, from the checkout host, and nothing else.
    const returned = await s.page.evaluate(() => (globalThis as unknown as { received: Array<{ origin: string; data: string }> }).received.filter((r) => r.data.includes('"returned"')));
    expect(returned.map((r) => r.origin)).toEqual([merchantOrigin, base]);

    // Again, with the right code.
    await startConfirm();
    await expect.poll(() => challenge.locator('#challenge-hint').textContent(), { timeout: WAIT_MS }).toContain('123456');
    await challenge.locator('#challenge-code').fill('123456');
    await challenge.locator('#challenge-submit').click();
    const result = (await s.page.evaluate(() => (globalThis as unknown as { pending: Promise<Result> }).pending)) as Result;
    expect(result).toEqual({ status: 'paid', orderId: s.order.id });
    expect(await s.page.locator('[role=dialog]').count()).toBe(0);
    const order = await retrieve(s.order.id);
    expect(order.status).toBe('paid');
    expect(order.attempts.map((a) => [a.status, a.decline_code])).toEqual([
      ['failed', 'authentication_failed'],
      ['succeeded', null],
    ]);
    await assertNumberNeverReachedThePage(s.page, number);
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it("close the issuer's overlay: the challenge is abandoned, a decline the customer can act on", async () => {
    const s = await shopper('fields-challenge-closed');
    await fillCard(s.page, testCard('challenge'));
    await s.page.evaluate(() => {
      const g = globalThis as unknown as { fields: { confirm: (o: { name: string }) => Promise<unknown> }; pending: Promise<unknown> };
      g.pending = g.fields.confirm({ name: 'Ada Lovelace' });
    });
    await expect.poll(() => s.page.frameLocator('[role=dialog] iframe').locator('#challenge-hint').textContent(), { timeout: WAIT_MS }).toContain('123456');
    await s.page.locator('[role=dialog]').getByRole('button', { name: 'Cancel' }).click();
    const result = (await s.page.evaluate(() => (globalThis as unknown as { pending: Promise<Result> }).pending)) as Result;
    expect(result).toMatchObject({ status: 'declined' });
    expect(await s.page.locator('[role=dialog]').count()).toBe(0);
    expect((await retrieve(s.order.id)).status).toBe('failed');
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it("a script on the merchant's page cannot re-point the fields at another order: the frame takes its key and client secret once", async () => {
    const s = await shopper('fields-reinit');
    // The attacker's order: another client secret, as a compromised script on the page could hold.
    const other = await api<{ id: string; client_secret: string }>(base, h.sandbox.test_secret_key, 'POST', '/v1/orders', orderBody({ reference: 'fields-reinit-other' }));
    expect(other.status).toBe(201);
    await s.page.evaluate(
      ([pk, secret]) => {
        const frame = (globalThis as unknown as { document: { querySelector: (s: string) => { src: string; contentWindow: { postMessage: (m: unknown, o: string) => void } } } }).document.querySelector('#number iframe');
        frame.contentWindow.postMessage({ tag: 'checkout-fields/1', type: 'init', label: 'Card number', placeholder: '', style: {}, publishableKey: pk, clientSecret: secret }, new URL(frame.src).origin);
      },
      [h.sandbox.test_publishable_key, other.json.client_secret],
    );
    const number = testCard('approved');
    await fillCard(s.page, number);
    expect(await confirm(s.page)).toEqual({ status: 'paid', orderId: s.order.id });
    expect((await retrieve(s.order.id)).status).toBe('paid');
    const untouched = await retrieve(other.json.id);
    expect(untouched.status).toBe('pending');
    expect(untouched.attempts).toEqual([]);
    await s.context.close();
  });

  it('pay with the soft-declined card, retried on the alternative route', async () => {
    const s = await shopper('fields-soft');
    const number = testCard('soft_decline');
    await fillCard(s.page, number);
    expect(await confirm(s.page)).toEqual({ status: 'paid', orderId: s.order.id });
    const order = await retrieve(s.order.id);
    expect(order.status).toBe('paid');
    expect(order.attempts.map((a) => [a.status, a.retry])).toEqual([
      ['failed', false],
      ['succeeded', true],
    ]);
    expect(order.attempts[0]!.decline_code).toBe('insufficient_funds');
    await assertNumberNeverReachedThePage(s.page, number);
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it('show a hard decline the customer acts on: another card in the same fields pays', async () => {
    const s = await shopper('fields-hard');
    const declinedNumber = testCard('hard_decline');
    await fillCard(s.page, declinedNumber);
    const declined = await confirm(s.page);
    expect(declined).toMatchObject({ status: 'declined', code: 'expired_card' });
    expect(declined.attemptsRemaining).toBeGreaterThan(0);
    expect(declined.message).toBeTruthy();
    const failed = await retrieve(s.order.id);
    expect(failed.status).toBe('failed');
    expect(failed.attempts.map((a) => a.decline_code)).toEqual(['expired_card']);

    await s.page.frameLocator('#number iframe').locator('input').fill(testCard('approved'));
    expect(await confirm(s.page)).toEqual({ status: 'paid', orderId: s.order.id });
    expect((await retrieve(s.order.id)).status).toBe('paid');
    await assertNumberNeverReachedThePage(s.page, declinedNumber);
    await assertNumberNeverReachedThePage(s.page, testCard('approved'));
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it('pay once when the connection drops after the service paid: retries and the next confirm repeat the submission id', async () => {
    const s = await shopper('fields-dropped');
    const bodies: string[] = [];
    let drop = true;
    // The first SubmitCardPayment reaches the service, which pays; the browser sees every connection of this confirm fail.
    await s.context.route('**/checkout.v1.CheckoutService/SubmitCardPayment', async (route) => {
      bodies.push(route.request().postData() ?? '');
      if (!drop) return route.continue();
      if (bodies.length === 1) await route.fetch();
      await route.abort('connectionreset');
    });
    await fillCard(s.page, testCard('approved'));
    expect(await confirm(s.page)).toMatchObject({ status: 'failed', code: 'unavailable' });
    expect(bodies).toHaveLength(3);

    // The customer confirms again once the network is back: the same submission, answered with the first outcome.
    drop = false;
    expect(await confirm(s.page)).toEqual({ status: 'paid', orderId: s.order.id });
    expect(bodies).toHaveLength(4);
    expect(new Set(bodies.map((b) => JSON.parse(b).submissionId)).size).toBe(1);
    const order = await retrieve(s.order.id);
    expect(order.status).toBe('paid');
    expect(order.attempts.map((a) => a.status)).toEqual(['succeeded']);
    expect(s.problems.filter((p) => !p.includes('ERR_CONNECTION_RESET'))).toEqual([]);
    await s.context.close();
  });

  it('report an incomplete card without calling the service, and have no accessibility violations in the frames', async () => {
    const s = await shopper('fields-incomplete');
    await s.page.frameLocator('#number iframe').locator('input').fill('4242 4242');
    const result = await confirm(s.page);
    expect(result).toMatchObject({ status: 'failed', code: 'card_number_incomplete' });
    // The error is announced inside the frame, and the input marked invalid.
    const numberFrame = frameOf(s.page, '/fields/card-number');
    expect(await numberFrame.locator('#e').textContent()).toBe('The card number is incomplete.');
    expect(await numberFrame.locator('input').getAttribute('aria-invalid')).toBe('true');
    expect(await numberFrame.locator('input').getAttribute('placeholder')).toBe('1234 1234 1234 1234');
    expect(await numberFrame.locator('label').textContent()).toBe('Numéro de carte');
    for (const path of ['/fields/card-number', '/fields/card-expiry', '/fields/card-cvc']) {
      expect(await axeViolations(frameOf(s.page, path)), path).toEqual([]);
    }
    expect((await retrieve(s.order.id)).status).toBe('pending');
    expect(s.problems).toEqual([]);
    await s.context.close();
  });

  it('are not framed by a page of another origin than the one announced', async () => {
    const res = await fetch(`${base}/fields/card-number?origin=${encodeURIComponent('http://127.0.0.3:1')}`);
    expect(res.headers.get('content-security-policy')).toContain('frame-ancestors http://127.0.0.3:1');
    const s = await shopper('fields-framing');
    const append = (url: string) =>
      s.page.evaluate(async (src) => {
        const g = globalThis as unknown as { document: { createElement: (t: string) => { src: string; onload: () => void }; body: { appendChild: (e: unknown) => void } } };
        const frame = g.document.createElement('iframe');
        frame.src = src;
        await new Promise<void>((resolve) => {
          frame.onload = resolve;
          g.document.body.appendChild(frame);
        });
      }, url);
    const merchantOrigin = new URL(merchantUrl).origin;
    // The page's true origin announced: the field loads (the control).
    await append(`${base}/fields/card-cvc?origin=${encodeURIComponent(merchantOrigin)}#${'b'.repeat(32)}`);
    const control = s.page.frames().filter((f) => f.url().endsWith('b'.repeat(32)));
    expect(control).toHaveLength(1);
    expect(await control[0]!.locator('#f').count()).toBe(1);
    // Another origin announced by this page: the browser refuses to render the frame (frame-ancestors).
    await append(`${base}/fields/card-number?origin=${encodeURIComponent('http://127.0.0.3:1')}#${'a'.repeat(32)}`);
    await expect.poll(() => s.problems.join('\n'), { timeout: WAIT_MS }).toContain('frame-ancestors');
    for (const frame of s.page.frames().filter((f) => f.url().includes('a'.repeat(32)))) expect(await frame.locator('#f').count()).toBe(0);
    await s.context.close();
  });
});
