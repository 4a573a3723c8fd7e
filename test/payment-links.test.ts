/**
 * Payment links over REST and the link page, on the real Postgres: create, retrieve, list and
 * deactivate; validation as for orders; isolation between merchants and modes; idempotency;
 * opening a link (its payment form, and no order) and starting to pay it (one order per start,
 * the same one for a repeated start, none for a closed link); a link's orders; a collecting link
 * paid several times; and a single-use link that 20 payments race for.
 */
import { ConnectError } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { ErrorDetailSchema } from '../src/gen/checkout/v1/errors_pb.ts';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { payWithTestCard } from './support/payments.ts';
import { startTestService, TEST_CHECKOUT_URL, type TestService } from './support/service.ts';

let svc: TestService;
let acme: SandboxCredentials;
let globex: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  acme = await svc.sandbox('Acme');
  globex = await svc.sandbox('Globex');
});

afterAll(async () => {
  await svc?.close();
});

/** A link or an order as REST answers it, read loosely by the assertions. */
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const auth = (key: string) => ({ authorization: `Bearer ${key}` });

function linkBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    amount: 2500,
    currency: 'EUR',
    reference: 'LINK-1',
    type: 'single_use',
    line_items: [
      { name: 'Green tea', amount: 1500 },
      { name: 'Teapot', amount: 1000 },
    ],
    return_url: 'http://127.0.0.1:9/thanks',
    ...overrides,
  };
}

function createLink(body: unknown, headers: Record<string, string> = auth(acme.test_secret_key)) {
  return svc.app.inject({ method: 'POST', url: '/v1/links', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
}

async function newLink(overrides: Record<string, unknown> = {}, key = acme.test_secret_key): Promise<Json> {
  const res = await createLink(linkBody(overrides), auth(key));
  expect(res.statusCode).toBe(201);
  return res.json();
}

const get = (url: string, key = acme.test_secret_key) => svc.app.inject({ method: 'GET', url, headers: auth(key) });
const deactivate = (id: string, key = acme.test_secret_key, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'POST', url: `/v1/links/${id}/deactivate`, headers: { ...auth(key), ...headers } });

/** Opens a link's URL as a browser would; answers the response. */
async function open(url: string, options: { language?: string } = {}) {
  const res = await svc.app.inject({ method: 'GET', url: new URL(url).pathname, headers: { 'accept-language': options.language ?? 'en' } });
  return { res };
}

/** Each simulated customer comes from an address of their own (the start limits count per address). */
let customers = 0;

/**
 * A customer's first Pay on the link's page: PaymentLinkPageService.StartPayment over Connect JSON, as
 * the page's script calls it. Answers the response, and the order's id and token when one was started.
 */
async function start(url: string, options: { startId?: string; remoteAddress?: string } = {}) {
  const suffix = new URL(url).pathname.slice('/l/'.length);
  customers += 1;
  const res = await svc.app.inject({
    method: 'POST',
    url: '/checkout.v1.PaymentLinkPageService/StartPayment',
    remoteAddress: options.remoteAddress ?? `127.1.${customers >> 8}.${customers & 255}`,
    headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
    payload: { suffix, startId: options.startId ?? crypto.randomUUID() },
  });
  const body = res.json();
  return { res, orderId: res.statusCode === 200 ? `ord_${body.checkoutId as string}` : undefined, token: body.checkoutToken as string | undefined, body };
}

async function ordersOfLink(linkId: string, key = acme.test_secret_key): Promise<Json[]> {
  const res = await get(`/v1/orders?payment_link=${linkId}&limit=100`, key);
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

const reasonOf = (err: unknown) => ConnectError.from(err).findDetails(ErrorDetailSchema)[0]?.code;

describe('POST /v1/links', () => {
  it('creates an active link with a URL on the checkout host, and idempotently', async () => {
    const headers = { ...auth(acme.test_secret_key), 'idempotency-key': 'link-create-1' };
    const res = await createLink(linkBody({ reference: 'Résumé №1 🧾' }), headers);
    expect(res.statusCode).toBe(201);
    const link = res.json();
    expect(link).toMatchObject({
      object: 'payment_link',
      type: 'single_use',
      status: 'active',
      active: true,
      amount: 2500,
      currency: 'EUR',
      reference: 'Résumé №1 🧾',
      return_url: 'http://127.0.0.1:9/thanks',
      expires_at: null,
      completed_payments: 0,
      deactivated_at: null,
      livemode: false,
    });
    expect(link.id).toMatch(/^plink_[0-9A-Za-z]{24}$/);
    expect(link.url).toMatch(new RegExp(`^${TEST_CHECKOUT_URL}/l/[0-9A-Za-z]{32}$`));
    // The URL's suffix is a secret of its own, not the id.
    expect(link.url).not.toContain(link.id.slice(6));

    const replay = await createLink(linkBody({ reference: 'Résumé №1 🧾' }), headers);
    expect(replay.statusCode).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json()).toEqual(link);
    expect(await svc.db.knex('payment_links').where({ reference: 'Résumé №1 🧾' }).count({ n: '*' })).toEqual([{ n: '1' }]);

    const reused = await createLink(linkBody({ reference: 'other' }), headers);
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error.code).toBe('idempotency_key_reused');
  });

  it.each([
    [{ amount: 0 }, 400, 'amount_invalid', 'amount'],
    [{ amount: 1999.5 }, 400, 'parameter_invalid_integer', 'amount'],
    [{ amount: 100, currency: 'JPY', line_items: [] }, 201, undefined, undefined],
    [{ amount: 1_000_000_000, currency: 'JPY', line_items: [] }, 400, 'amount_too_large', 'amount'],
    [{ currency: 'eur' }, 400, 'currency_invalid', 'currency'],
    [{ reference: 'x'.repeat(256) }, 400, 'reference_invalid', 'reference'],
    [{ reference: '' }, 400, 'parameter_missing', 'reference'],
    [{ line_items: [{ name: 'Tea', amount: 100 }] }, 400, 'line_items_sum_mismatch', 'line_items'],
    [{ return_url: 'javascript:alert(1)' }, 400, 'return_url_invalid', 'return_url'],
    [{ type: 'reusable' }, 400, 'parameter_invalid', 'type'],
    [{ type: undefined }, 400, 'parameter_missing', 'type'],
    [{ expires_at: new Date(Date.now() + 60_000).toISOString() }, 400, 'expires_at_invalid', 'expires_at'],
    [{ expires_at: new Date(Date.now() + 400 * 86_400_000).toISOString() }, 400, 'expires_at_invalid', 'expires_at'],
    [{ expires_at: new Date(Date.now() + 90 * 86_400_000).toISOString() }, 201, undefined, undefined],
    [{ colour: 'red' }, 400, 'parameter_unknown', 'colour'],
  ])('validates %j like an order: %i %s', async (overrides, status, code, param) => {
    const res = await createLink(linkBody(overrides));
    expect(res.statusCode).toBe(status);
    if (code) expect(res.json().error).toMatchObject({ code, param });
  });

  it('refuses a request without a valid secret key, and creates nothing', async () => {
    const before = await svc.db.knex('payment_links').count({ n: '*' });
    expect((await createLink(linkBody(), {})).statusCode).toBe(401);
    expect((await createLink(linkBody(), auth(acme.test_publishable_key))).statusCode).toBe(403);
    expect(await svc.db.knex('payment_links').count({ n: '*' })).toEqual(before);
  });
});

describe('GET, list and deactivate', () => {
  it('retrieves and lists links, newest first, with a cursor, confined to the merchant and the mode', async () => {
    const a = await newLink({ reference: 'list-a' }, globex.test_secret_key);
    const b = await newLink({ reference: 'list-b', type: 'collecting' }, globex.test_secret_key);
    const live = await newLink({ reference: 'list-live' }, globex.live_secret_key);
    expect(live.livemode).toBe(true);

    expect((await get(`/v1/links/${a.id}`, globex.test_secret_key)).json()).toEqual(a);
    expect((await get(`/v1/links/${a.id}`, acme.test_secret_key)).statusCode).toBe(404);
    expect((await get(`/v1/links/${a.id}`, globex.live_secret_key)).statusCode).toBe(404);
    expect((await get('/v1/links/plink_nope', globex.test_secret_key)).json().error.code).toBe('resource_missing');

    const first = (await get('/v1/links?limit=1', globex.test_secret_key)).json();
    expect(first).toMatchObject({ object: 'list', url: '/v1/links', has_more: true });
    expect(first.data.map((l: { id: string }) => l.id)).toEqual([b.id]);
    const second = (await get(`/v1/links?limit=10&starting_after=${b.id}`, globex.test_secret_key)).json();
    expect(second.data.map((l: { id: string }) => l.id)).toEqual([a.id]);
    expect(second.has_more).toBe(false);
    expect((await get('/v1/links', globex.live_secret_key)).json().data.map((l: { id: string }) => l.id)).toEqual([live.id]);
    expect((await get(`/v1/links?starting_after=${a.id}`, acme.test_secret_key)).json().error.code).toBe('starting_after_invalid');
    expect((await get('/v1/links?limit=0', globex.test_secret_key)).json().error.code).toBe('limit_invalid');
  });

  it('deactivates a link once, with payment_link.deactivated, and answers it unchanged after', async () => {
    const link = await newLink({ reference: 'deactivate-me' });
    expect((await deactivate(link.id, globex.test_secret_key)).statusCode).toBe(404);
    const res = await deactivate(link.id, acme.test_secret_key, { 'idempotency-key': 'deact-1' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ id: link.id, status: 'deactivated', active: false });
    expect(res.json().deactivated_at).not.toBeNull();
    const again = await deactivate(link.id);
    expect(again.json()).toEqual(res.json());
    const events = await svc.db.knex('events').where({ subject_type: 'payment_link', subject_id: link.id });
    expect(events.map((e) => e.type)).toEqual(['payment_link.deactivated']);
    expect(events[0].data).toMatchObject({ id: link.id, status: 'deactivated', reference: 'deactivate-me' });
  });
});

describe('opening a link', () => {
  it('shows the payment form for the link itself and creates nothing', async () => {
    const link = await newLink({ reference: 'open-0', type: 'collecting' });
    const before = await svc.db.knex('orders').count({ n: '*' });
    const events = await svc.db.knex('events').count({ n: '*' });
    const page = await open(link.url);
    expect(page.res.statusCode).toBe(200);
    expect(page.res.headers['set-cookie']).toBeUndefined();
    expect(page.res.headers['cache-control']).toBe('no-store');
    expect(page.res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.res.body).toContain('<h1>Pay Acme</h1>');
    expect(page.res.body).toContain('Green tea');
    expect(page.res.body).toContain('open-0');
    expect(page.res.body).toContain('Pay €25.00');
    // The script gets the link's suffix in place of an order's checkout id and token.
    expect(page.res.body).toContain(`data-link="${new URL(link.url).pathname.slice(3)}"`);
    expect(page.res.body).toContain('data-checkout-id=""');
    expect(page.res.body).toContain('data-token=""');
    expect(await svc.db.knex('orders').count({ n: '*' })).toEqual(before);
    expect(await svc.db.knex('events').count({ n: '*' })).toEqual(events);
  });

  it('starts one order per customer who starts to pay, carrying the link, and the same one for a repeated start', async () => {
    const link = await newLink({ reference: 'open-1', type: 'collecting' });
    const first = await start(link.url, { startId: 'page-load-1' });
    expect(first.res.statusCode).toBe(200);
    expect(first.orderId).toMatch(/^ord_/);
    expect(first.body).toEqual({ checkoutId: first.orderId!.slice(4), checkoutToken: expect.stringMatching(/^[A-Za-z0-9_-]{20,}$/), checkoutUrl: `${TEST_CHECKOUT_URL}/c/${first.orderId!.slice(4)}` });

    // The same page load retrying its start (a lost answer) gets the same order, whatever address it comes from now.
    const retried = await start(link.url, { startId: 'page-load-1' });
    expect(retried.orderId).toBe(first.orderId);
    expect(retried.token).toBe(first.token);
    const otherCustomer = await start(link.url);
    expect(otherCustomer.orderId).not.toBe(first.orderId);

    const orders = await ordersOfLink(link.id);
    expect(orders.map((o) => o.id).sort()).toEqual([first.orderId, otherCustomer.orderId].sort());
    expect(orders[0]!).toMatchObject({ reference: 'open-1', amount: 2500, currency: 'EUR', status: 'pending', payment_link: link.id, return_url: 'http://127.0.0.1:9/thanks' });
    expect(orders[0]!.line_items).toEqual(link.line_items);
    // An hour to pay.
    expect(new Date(orders[0]!.expires_at).getTime() - new Date(orders[0]!.created).getTime()).toBe(3600_000);
    const created = await svc.db.knex('events').where({ order_id: first.orderId, type: 'order.created' });
    expect(created).toHaveLength(1);
    expect(created[0].data.payment_link).toBe(link.id);
    // The order's page is the normal checkout, and the token the start answered pays it.
    const card = acme.test_cards.find((c) => c.behaviour === 'approved')!;
    const paid = await svc.app.inject({
      method: 'POST',
      url: '/checkout.v1.CheckoutService/SubmitCardPayment',
      headers: { 'content-type': 'application/json', 'checkout-token': first.token! },
      payload: { checkoutId: first.orderId!.slice(4), submissionId: 'pay-1', card: { number: card.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada' } },
    });
    expect(paid.json().outcome.status).toBe('PAYMENT_STATUS_SUCCEEDED');
    // Ordinary orders name no link, and another merchant sees none of the link's orders.
    expect((await get(`/v1/orders?payment_link=${link.id}`, globex.test_secret_key)).json().data).toEqual([]);
    expect((await get('/v1/orders?payment_link=not%20an%20id')).json().error.code).toBe('parameter_invalid');
  });

  it('refuses a start for an unknown link, or with a start id no page makes, and creates nothing', async () => {
    const link = await newLink({ reference: 'open-bad', type: 'collecting' });
    const before = await svc.db.knex('orders').count({ n: '*' });
    const unknown = await start('http://pay.test/l/AbCdEfGhIjKlMnOpQrStUvWxYz012345');
    expect(unknown.res.statusCode).toBe(404);
    expect(unknown.body.details[0].debug).toMatchObject({ code: 'resource_missing' });
    for (const startId of ['', 'x'.repeat(101), 'with space']) {
      const bad = await start(link.url, { startId });
      expect(bad.res.statusCode).toBe(400);
      expect(bad.body.details[0].debug).toMatchObject({ code: 'parameter_invalid', param: 'start_id' });
    }
    expect(await svc.db.knex('orders').count({ n: '*' })).toEqual(before);
  });

  it('answers an unknown or malformed link with the not-found page and creates nothing', async () => {
    const before = await svc.db.knex('orders').count({ n: '*' });
    const unknown = await svc.app.inject({ method: 'GET', url: '/l/AbCdEfGhIjKlMnOpQrStUvWxYz012345' });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-security-policy']).toContain("default-src 'none'");
    expect((await svc.app.inject({ method: 'GET', url: '/l/%3Cscript%3E' })).statusCode).toBe(404);
    expect(await svc.db.knex('orders').count({ n: '*' })).toEqual(before);
  });

  it('shows a deactivated or expired link closed, in the customer\'s language, and creates no order', async () => {
    const deactivated = await newLink({ reference: 'closed-1', type: 'collecting' });
    await deactivate(deactivated.id);
    const expired = await newLink({ reference: 'closed-2', type: 'collecting', expires_at: new Date(Date.now() + 600_000).toISOString() });
    await svc.db.knex('payment_links').where({ id: expired.id }).update({ expires_at: new Date(Date.now() - 1000) });
    expect((await get(`/v1/links/${expired.id}`)).json()).toMatchObject({ status: 'expired', active: false });
    const before = await svc.db.knex('orders').count({ n: '*' });

    const en = await open(deactivated.url);
    expect(en.res.statusCode).toBe(200);
    expect(en.res.headers['content-security-policy']).toContain("script-src 'self'");
    expect(en.res.body).toContain('This payment link is no longer active');
    expect(en.res.body).toContain('Acme has switched off this payment link');
    expect(en.res.body).toContain('<html lang="en">');

    const de = await open(expired.url, { language: 'de-DE,de;q=0.9' });
    expect(de.res.statusCode).toBe(200);
    expect(de.res.body).toContain('Dieser Zahlungslink ist abgelaufen');
    expect(de.res.body).toContain('<html lang="de-DE">');
    expect(de.res.body).toContain('href="http://127.0.0.1:9/thanks"');

    // Starting to pay it is refused too, before anything is written.
    expect((await start(deactivated.url)).body.details[0].debug.code).toBe('payment_link_inactive');
    expect((await start(expired.url)).body.details[0].debug.code).toBe('payment_link_inactive');

    expect(await svc.db.knex('orders').count({ n: '*' })).toEqual(before);
    expect(await ordersOfLink(deactivated.id)).toEqual([]);
  });

  it('refuses a payment on an open order once its link is deactivated, and charges nothing', async () => {
    const link = await newLink({ reference: 'deactivated-while-open', type: 'collecting' });
    const { orderId } = await start(link.url);
    await deactivate(link.id);
    const err = await payWithTestCard(svc.core.routes, acme, orderId!).catch((e: unknown) => e);
    expect(reasonOf(err)).toBe('payment_link_inactive');
    expect(await svc.db.knex('payment_attempts').where({ order_id: orderId })).toEqual([]);
  });
});

describe('payments on a link', () => {
  it('a collecting link takes several payments, each on its own order, and counts them', async () => {
    const link = await newLink({ reference: 'collect', type: 'collecting' });
    const orders: string[] = [];
    for (let i = 0; i < 3; i++) {
      const { orderId } = await start(link.url);
      const paid = await payWithTestCard(svc.core.routes, acme, orderId!);
      expect(paid.outcome?.status).toBe(PaymentStatus.SUCCEEDED);
      orders.push(orderId!);
    }
    expect((await get(`/v1/links/${link.id}`)).json()).toMatchObject({ status: 'active', active: true, completed_payments: 3 });
    const listed = await ordersOfLink(link.id);
    expect(listed.map((o) => o.status)).toEqual(['paid', 'paid', 'paid']);
    const paidEvents = await svc.db.knex('events').whereIn('order_id', orders).andWhere({ type: 'order.paid' });
    expect(paidEvents).toHaveLength(3);
    for (const e of paidEvents) expect(e.data).toMatchObject({ reference: 'collect', payment_link: link.id });
    // A collecting link raises no payment_link.completed.
    expect(await svc.db.knex('events').where({ subject_id: link.id })).toEqual([]);
  });

  it('a single-use link: a declined payment releases it, the first success completes it, and the link then shows "already paid"', async () => {
    const link = await newLink({ reference: 'single' });
    const a = await start(link.url);
    const b = await start(link.url);
    const declined = await payWithTestCard(svc.core.routes, acme, a.orderId!, { behaviour: 'hard_decline' });
    expect(declined.outcome?.status).toBe(PaymentStatus.FAILED);
    const paid = await payWithTestCard(svc.core.routes, acme, b.orderId!);
    expect(paid.outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    const late = await payWithTestCard(svc.core.routes, acme, a.orderId!, { submissionId: 'again' }).catch((e: unknown) => e);
    expect(reasonOf(late)).toBe('payment_link_used');
    // Nor can anyone start to pay it now.
    expect((await start(link.url)).body.details[0].debug.code).toBe('payment_link_used');

    expect((await get(`/v1/links/${link.id}`)).json()).toMatchObject({ status: 'completed', active: false, completed_payments: 1 });
    const completed = await svc.db.knex('events').where({ subject_id: link.id });
    expect(completed.map((e) => e.type)).toEqual(['payment_link.completed']);
    expect(completed[0].data).toMatchObject({ id: link.id, order_id: b.orderId, status: 'completed' });

    const before = await svc.db.knex('orders').count({ n: '*' });
    const again = await open(link.url, { language: 'de' });
    expect(again.res.statusCode).toBe(200);
    expect(again.res.body).toContain('Dieser Zahlungslink wurde bereits bezahlt');
    expect(await svc.db.knex('orders').count({ n: '*' })).toEqual(before);
    // The payer reloading the link is told the same; their receipt stays on the order's page.
    expect((await open(link.url)).res.body).toContain('This payment link has already been paid');
  });

  it('a single-use link: no order is started while another order of it has a payment under way', async () => {
    const link = await newLink({ reference: 'single-in-flight' });
    const a = await start(link.url);
    // The first customer's payment waits for its 3-D Secure challenge: it holds the link's one payment.
    const challenged = await payWithTestCard(svc.core.routes, acme, a.orderId!, { behaviour: 'challenge' });
    expect(challenged.outcome?.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const before = await svc.db.knex('orders').count({ n: '*' });
    const b = await start(link.url);
    expect(b.res.statusCode).toBe(400);
    expect(b.body.details[0].debug.code).toBe('payment_link_used');
    expect(await svc.db.knex('orders').count({ n: '*' })).toEqual(before);
  });

  it('a bank transfer cannot pay a single-use link a second time', async () => {
    const link = await newLink({ reference: 'single-transfer' });
    const a = await start(link.url);
    const b = await start(link.url);
    expect((await payWithTestCard(svc.core.routes, acme, a.orderId!)).outcome?.status).toBe(PaymentStatus.SUCCEEDED);
    const transfer = await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${b.orderId}/simulate_transfer`, headers: auth(acme.test_secret_key) });
    expect(transfer.statusCode).toBe(422);
    expect(transfer.json().error.code).toBe('payment_link_used');
    expect((await get(`/v1/orders/${b.orderId}`)).json().status).toBe('pending');
  });

  it('20 concurrent payments on orders of one single-use link: exactly one succeeds, the others are told it was used and not charged', async () => {
    const link = await newLink({ reference: 'race-20' });
    const orderIds: string[] = [];
    for (let i = 0; i < 20; i++) orderIds.push((await start(link.url)).orderId!);
    const results = await Promise.allSettled(orderIds.map((id) => payWithTestCard(svc.core.routes, acme, id)));
    const succeeded = results.filter((r) => r.status === 'fulfilled' && r.value.outcome?.status === PaymentStatus.SUCCEEDED);
    expect(succeeded).toHaveLength(1);
    const refused = results.filter((r) => r.status === 'rejected');
    expect(refused).toHaveLength(19);
    for (const r of refused) expect(reasonOf((r as PromiseRejectedResult).reason)).toBe('payment_link_used');

    const orders = await ordersOfLink(link.id);
    expect(orders.filter((o) => o.status === 'paid')).toHaveLength(1);
    expect(orders.filter((o) => o.status === 'pending')).toHaveLength(19);
    // Only the winner ever reached an acquirer; one capture in the ledger.
    expect(await svc.db.knex('payment_attempts').whereIn('order_id', orderIds)).toHaveLength(1);
    const captures = await svc.db.knex('ledger_transactions').whereIn('order_id', orderIds).andWhere({ kind: 'capture' });
    expect(captures).toHaveLength(1);
    expect((await get(`/v1/links/${link.id}`)).json()).toMatchObject({ status: 'completed', completed_payments: 1 });
    expect(svc.internalErrors).toEqual([]);
  });
});
