// Customers and the card vault on the real Postgres: customers' CRUD and isolation, vaulting from raw
// fields and from single-use tokens, fingerprints, envelope encryption at rest and key rotation
// without decrypting a card number, off-session charges posted to the ledger as a checkout payment,
// and a run whose database, logs and events are then searched for every card number and CVC.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { CheckoutService, PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { ErrorDetailSchema } from '../src/gen/checkout/v1/errors_pb.ts';
import { buildGateway } from '../gateway/app.ts';
import { createCore, type Core } from '../src/composition/core.ts';
import { createAesGcmKeyRing } from '../src/kernel/adapters/crypto/aes-gcm-key-ring.ts';
import { luhnValid } from '../src/modules/payment/domain/card.ts';
import { PostgresWebhookEndpointRepository } from '../src/modules/webhook/adapters/postgres/postgres-webhook-endpoint-repository.ts';
import { createSigningSecrets } from '../src/modules/webhook/application/signing-secrets.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { orderBody } from './support/order-fixtures.ts';
import { TEST_API_URL, TEST_CHECKOUT_URL } from './support/service.ts';
import { pageToken } from './support/payments.ts';

const OLD_KEK = { id: 'kek-2025', secret: randomBytes(32) };
const NEW_KEK = { id: 'kek-2026', secret: randomBytes(32) };
const CVC = '987';

let db: TestDatabase;
let core: Core;
let app: FastifyInstance;
const logLines: string[] = [];
const internalErrors: unknown[] = [];
let shop: SandboxCredentials;
let other: SandboxCredentials;

/** Core and gateway over the test database with these KEKs, logging at debug level into logLines. */
async function start(keys: typeof OLD_KEK[], activeKeyId: string): Promise<void> {
  core = createCore({
    knex: db.knex,
    apiBaseUrl: TEST_API_URL,
    checkoutHost: TEST_CHECKOUT_URL,
    onInternalError: (err) => {
      internalErrors.push(err);
      logLines.push(String((err as Error)?.stack ?? err));
    },
    keyRing: createAesGcmKeyRing({ keys, activeKeyId, configured: true }),
  });
  app = await buildGateway({ routes: core.routes, publicUrl: TEST_API_URL, logger: { level: 'debug', stream: { write: (line: string) => logLines.push(line) } } });
  // The service logs errors only (access logs are the proxy's); every answer is logged here too, so
  // the search below covers each API response, error messages included.
  app.addHook('onSend', async (req, reply, payload) => {
    req.log.debug({ url: req.url, status: reply.statusCode, body: typeof payload === 'string' ? payload : '' }, 'answered');
    return payload;
  });
  await app.ready();
}

beforeAll(async () => {
  db = await createTestDatabase();
  await start([OLD_KEK], OLD_KEK.id);
  shop = (await core.createSandbox({ name: 'Vault shop', settlementCurrency: 'EUR' }))!;
  other = (await core.createSandbox({ name: 'Other shop', settlementCurrency: 'EUR' }))!;
});
afterAll(async () => {
  await app?.close();
  const broken = await core?.ledger.verify();
  await db?.drop();
  if (broken) throw new Error(`ledger invariant broken: ${broken.invariant}: ${broken.detail}`);
});

const auth = (key: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra });
const call = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, key = shop.test_secret_key, extra: Record<string, string> = {}) =>
  app.inject({ method, url, headers: auth(key, extra), ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
const cardOf = (s: SandboxCredentials, behaviour: string) => s.test_cards.find((c) => c.behaviour === behaviour)!.number;
const rawCard = (number: string) => ({ number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: CVC, name: 'Ada Lovelace' });

async function newCustomer(body: Record<string, unknown> = { email: 'ada@example.com', name: 'Ada' }, key = shop.test_secret_key): Promise<string> {
  const res = await call('POST', '/v1/customers', body, key);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id as string;
}

describe('customers', () => {
  it('creates, reads, lists, updates and deletes a customer, with Idempotency-Key', async () => {
    const created = await call('POST', '/v1/customers', { email: 'grace@example.com', name: 'Grace', reference: 'crm-7', metadata: { plan: 'gold', tier: '2' } }, shop.test_secret_key, { 'idempotency-key': 'cus-1' });
    expect(created.statusCode, created.body).toBe(201);
    const customer = created.json();
    expect(customer).toMatchObject({ object: 'customer', email: 'grace@example.com', name: 'Grace', reference: 'crm-7', metadata: { plan: 'gold', tier: '2' }, livemode: false });
    expect(customer.id).toMatch(/^cus_/);
    const replay = await call('POST', '/v1/customers', { email: 'grace@example.com', name: 'Grace', reference: 'crm-7', metadata: { plan: 'gold', tier: '2' } }, shop.test_secret_key, { 'idempotency-key': 'cus-1' });
    expect(replay.json().id).toBe(customer.id);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect((await call('POST', '/v1/customers', { email: 'other@example.com' }, shop.test_secret_key, { 'idempotency-key': 'cus-1' })).json().error.code).toBe('idempotency_key_reused');

    expect((await call('GET', `/v1/customers/${customer.id}`)).json()).toEqual(customer);
    const updated = await call('POST', `/v1/customers/${customer.id}`, { name: '', metadata: { tier: '', region: 'eu' } });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ name: null, email: 'grace@example.com', metadata: { plan: 'gold', region: 'eu' } });

    const listed = await call('GET', '/v1/customers?email=grace%40example.com');
    expect(listed.json().data.map((c: { id: string }) => c.id)).toEqual([customer.id]);
    const deleted = await call('DELETE', `/v1/customers/${customer.id}`);
    expect(deleted.json()).toEqual({ id: customer.id, object: 'customer', deleted: true, cards_erased: 0 });
    expect((await call('GET', `/v1/customers/${customer.id}`)).statusCode).toBe(404);
    const row = await db.knex('customers').where({ id: customer.id }).first();
    expect(row).toMatchObject({ email: null, name: null, reference: null, metadata: {} });
  });

  it('pages through customers with a cursor, newest first', async () => {
    const ids = [];
    for (let i = 0; i < 3; i++) ids.push(await newCustomer({ email: `page${i}@example.com` }, other.test_secret_key));
    const first = (await call('GET', '/v1/customers?limit=2', undefined, other.test_secret_key)).json();
    expect(first.data.map((c: { id: string }) => c.id)).toEqual([ids[2], ids[1]]);
    expect(first.has_more).toBe(true);
    const second = (await call('GET', `/v1/customers?limit=2&starting_after=${ids[1]}`, undefined, other.test_secret_key)).json();
    expect(second.data.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(second.has_more).toBe(false);
  });

  it('refuses bad fields and isolates merchants and modes', async () => {
    const bad = await call('POST', '/v1/customers', { email: 'not-an-address' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().error).toMatchObject({ code: 'parameter_invalid', param: 'email' });
    const tooMany = await call('POST', '/v1/customers', { metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) });
    expect(tooMany.json().error).toMatchObject({ code: 'metadata_invalid', param: 'metadata' });
    const longValue = await call('POST', '/v1/customers', { metadata: { note: 'x'.repeat(501) } });
    expect(longValue.json().error.code).toBe('metadata_invalid');

    const id = await newCustomer();
    expect((await call('GET', `/v1/customers/${id}`, undefined, other.test_secret_key)).statusCode).toBe(404);
    expect((await call('DELETE', `/v1/customers/${id}`, undefined, other.test_secret_key)).statusCode).toBe(404);
    expect((await call('GET', `/v1/customers/${id}`, undefined, shop.live_secret_key ?? shop.test_secret_key.replace('_test_', '_live_'))).statusCode).not.toBe(200);
    expect((await call('GET', `/v1/customers/${id}/cards`, undefined, other.test_secret_key)).statusCode).toBe(404);
  });
});

describe('the card vault', () => {
  it('vaults a card from raw fields and from a token: brand, last4, expiry, fingerprint; CVC never stored', async () => {
    const customer = await newCustomer();
    const number = cardOf(shop, 'approved');
    const raw = await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(number) });
    expect(raw.statusCode, raw.body).toBe(201);
    const saved = raw.json();
    expect(saved).toMatchObject({ object: 'card', customer, brand: 'visa', last4: number.slice(-4), exp_month: 12, livemode: false });
    expect(saved.id).toMatch(/^card_/);
    expect(saved.fingerprint).toMatch(/^[0-9a-f]{64}$/);

    const token = await call('POST', '/v1/tokens', { card: rawCard(number) }, shop.test_publishable_key);
    expect(token.statusCode, token.body).toBe(201);
    expect(token.json()).toMatchObject({ object: 'token', card: { brand: 'visa', last4: number.slice(-4) } });
    const fromToken = await call('POST', `/v1/customers/${customer}/cards`, { token: token.json().id });
    expect(fromToken.statusCode, fromToken.body).toBe(201);
    expect(fromToken.json().fingerprint).toBe(saved.fingerprint);
    // Single use: the token's row (and the CVC sealed in it) is gone.
    const again = await call('POST', `/v1/customers/${customer}/cards`, { token: token.json().id });
    expect(again.json().error).toMatchObject({ code: 'token_invalid', param: 'token' });
    expect(await db.knex('vault_tokens').where({ id: token.json().id }).first()).toBeUndefined();

    // Another merchant's fingerprint of the same number differs (a keyed hash per merchant).
    const otherCustomer = await newCustomer({}, other.test_secret_key);
    const otherToken = (await call('POST', '/v1/tokens', { card: rawCard(number) }, other.test_publishable_key)).json().id;
    const elsewhere = await call('POST', `/v1/customers/${otherCustomer}/cards`, { token: otherToken }, other.test_secret_key);
    // The number is not one of the other sandbox's test cards: its issuer refuses it.
    expect(elsewhere.json().error.code).toBe('card_declined');
    const otherNumber = cardOf(other, 'approved');
    const o1 = (await call('POST', `/v1/customers/${otherCustomer}/cards`, { card: rawCard(otherNumber) }, other.test_secret_key)).json();
    const mine = await newCustomer();
    const onShop = await call('POST', `/v1/tokens`, { card: rawCard(otherNumber) }, shop.test_publishable_key);
    expect(onShop.statusCode).toBe(201);
    expect(o1.fingerprint).not.toBe(saved.fingerprint);
    void mine;

    // A token is the merchant's and mode's that made it; a secret-key call cannot use another's.
    const foreign = (await call('POST', '/v1/tokens', { card: rawCard(number) }, shop.test_publishable_key)).json().id;
    expect((await call('POST', `/v1/customers/${otherCustomer}/cards`, { token: foreign }, other.test_secret_key)).json().error.code).toBe('token_invalid');

    const row = await db.knex('vault_cards').where({ id: saved.id }).first();
    expect(row.kek_id).toBe(OLD_KEK.id);
    expect(Buffer.from(row.ciphertext).toString('latin1')).not.toContain(number);
    const listed = (await call('GET', `/v1/customers/${customer}/cards`)).json();
    expect(listed.data.map((c: { id: string }) => c.id)).toEqual([fromToken.json().id, saved.id]);
    expect((await call('GET', `/v1/customers/${customer}/cards/${saved.id}`)).json()).toEqual(saved);
  });

  it('verifies the card with the issuer once: a hard decline is refused, an unknown test card too', async () => {
    const customer = await newCustomer();
    const expired = await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'hard_decline')) });
    expect(expired.statusCode).toBe(400);
    expect(expired.json().error).toMatchObject({ type: 'card_error', code: 'card_declined' });
    const typo = await call('POST', `/v1/customers/${customer}/cards`, { card: { ...rawCard('4000000000000002'), cvc: '12' } });
    expect(typo.json().error.code).toBe('card_cvc_invalid');
    expect(await db.knex('vault_cards').where({ customer_id: customer })).toHaveLength(0);
    // Tokens need no secret key, but a publishable key cannot vault.
    expect((await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'approved')) }, shop.test_publishable_key)).json().error.code).toBe('secret_key_required');
  });

  it('charges a saved card off-session: paid at once, with order.paid and the ledger capture of a checkout payment', async () => {
    const customer = await newCustomer();
    const card = (await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'approved')) })).json();
    const res = await call('POST', '/v1/orders', orderBody({ amount: 4200, line_items: [], customer, card: card.id, confirm: true, reference: 'off-session-1' }), shop.test_secret_key, { 'idempotency-key': 'off-1' });
    expect(res.statusCode, res.body).toBe(201);
    const order = res.json();
    expect(order).toMatchObject({ status: 'paid', customer, method: 'card' });
    expect(order.attempts).toHaveLength(1);
    expect(order.attempts[0]).toMatchObject({ status: 'succeeded', card: card.id, card_last4: card.last4, authentication: 'not_required' });
    const paidEvents = await db.knex('events').where({ order_id: order.id, type: 'order.paid' });
    expect(paidEvents).toHaveLength(1);
    const createdEvent = await db.knex('events').where({ order_id: order.id, type: 'order.created' }).first();
    expect(createdEvent.data.customer).toBe(customer);
    const capture = await db.knex('ledger_entries').where('transaction_id', 'like', 'ltx_capture_%').andWhere({ order_id: order.id });
    expect(capture.length).toBeGreaterThan(1);
    // A retried create (same key) charges nothing more.
    const replay = await call('POST', '/v1/orders', orderBody({ amount: 4200, line_items: [], customer, card: card.id, confirm: true, reference: 'off-session-1' }), shop.test_secret_key, { 'idempotency-key': 'off-1' });
    expect(replay.json()).toMatchObject({ id: order.id, status: 'paid' });
    expect(await db.knex('payments').where({ order_id: order.id })).toHaveLength(1);
  });

  it('declines off-session a card that asks for 3-D Secure (authentication_required); customer alone just attaches', async () => {
    const customer = await newCustomer();
    const card = (await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'challenge')) })).json();
    expect(card.brand).toBe('mastercard');
    const res = await call('POST', '/v1/orders', orderBody({ line_items: [], customer, card: card.id, confirm: true }));
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({ status: 'failed', customer });
    expect(res.json().attempts[0]).toMatchObject({ status: 'failed', decline_code: 'authentication_required', card: card.id });

    const attached = await call('POST', '/v1/orders', orderBody({ customer }));
    expect(attached.json()).toMatchObject({ status: 'pending', customer, attempts: [] });
    expect((await call('POST', '/v1/orders', orderBody({ customer: 'cus_nobody' }))).json().error).toMatchObject({ code: 'resource_missing', param: 'customer' });
    expect((await call('POST', '/v1/orders', orderBody({ customer, card: 'card_nope', confirm: true }))).json().error).toMatchObject({ code: 'resource_missing', param: 'card' });
    expect((await call('POST', '/v1/orders', orderBody({ customer, card: card.id }))).json().error.param).toBe('confirm');
    expect((await call('POST', '/v1/orders', orderBody({ customer: await newCustomer({}, other.test_secret_key) }))).json().error.code).toBe('resource_missing');
  });

  it('erases a deleted customer\'s cards: the rows with their ciphertext are gone', async () => {
    const customer = await newCustomer();
    const card = (await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'approved')) })).json();
    const gone = (await call('DELETE', `/v1/customers/${customer}/cards/${card.id}`)).json();
    expect(gone).toEqual({ id: card.id, object: 'card', deleted: true });
    await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'approved')) });
    await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'dispute')) });
    const deleted = (await call('DELETE', `/v1/customers/${customer}`)).json();
    expect(deleted.cards_erased).toBe(2);
    expect(await db.knex('vault_cards').where({ customer_id: customer })).toHaveLength(0);
    expect((await call('POST', '/v1/orders', orderBody({ customer }))).json().error.code).toBe('resource_missing');
  });
});

describe('Idempotency-Key on requests with card fields', () => {
  /** Another valid card number with the same last four digits (one digit of the middle changed). */
  function sameLastFour(number: string): string {
    for (let d = 0; d <= 9; d++) {
      const other = number.slice(0, 6) + String(d) + number.slice(7);
      if (other !== number && luhnValid(other)) return other;
    }
    for (let d = 0; d <= 9; d++) {
      for (let e = 0; e <= 9; e++) {
        const other = number.slice(0, 6) + String(d) + String(e) + number.slice(8);
        if (other !== number && luhnValid(other)) return other;
      }
    }
    throw new Error('no number found');
  }
  const token = (card: ReturnType<typeof rawCard>, key: string) => call('POST', '/v1/tokens', { card }, shop.test_publishable_key, { 'idempotency-key': key });

  it('POST /v1/tokens: the same card replays its token; another card under the key, even with the same last four, is 422 (issue 19.5)', async () => {
    const card = rawCard(cardOf(shop, 'approved'));
    const first = await token(card, 'tok-key-1');
    expect(first.statusCode, first.body).toBe(201);
    const replay = await token({ ...card, number: card.number.replace(/(\d{4})(?=\d)/g, '$1 ') }, 'tok-key-1');
    expect(replay.statusCode, replay.body).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.json().id).toBe(first.json().id);

    const other = sameLastFour(card.number);
    expect(other.slice(-4)).toBe(card.number.slice(-4));
    for (const changed of [{ ...card, number: other }, { ...card, cvc: '123' }, { ...card, exp_month: 11 }, { ...card, exp_year: card.exp_year + 1 }, { ...card, name: 'Grace Hopper' }]) {
      const reused = await token(changed, 'tok-key-1');
      expect(reused.statusCode, JSON.stringify(changed)).toBe(422);
      expect(reused.json().error.code).toBe('idempotency_key_reused');
    }
    // The stored fingerprint is keyed: no plain hash of the card fields, and never the number.
    const record = await db.knex('idempotency_keys').where({ key: 'tok-key-1' }).first();
    expect(JSON.stringify(record)).not.toContain(card.number);
  });

  it('POST /v1/customers/:id/cards with raw fields: another number with the same last four under the key is 422', async () => {
    const customer = await newCustomer();
    const card = rawCard(cardOf(shop, 'approved'));
    const first = await call('POST', `/v1/customers/${customer}/cards`, { card }, shop.test_secret_key, { 'idempotency-key': 'card-key-1' });
    expect(first.statusCode, first.body).toBe(201);
    const replay = await call('POST', `/v1/customers/${customer}/cards`, { card }, shop.test_secret_key, { 'idempotency-key': 'card-key-1' });
    expect(replay.json().id).toBe(first.json().id);
    const reused = await call('POST', `/v1/customers/${customer}/cards`, { card: { ...card, number: sameLastFour(card.number) } }, shop.test_secret_key, { 'idempotency-key': 'card-key-1' });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error.code).toBe('idempotency_key_reused');
  });
});

describe('saving a card from the checkout', () => {
  /** The order's checkout, as its page drives it: the page's token, and the customer's card submissions. */
  async function pageOf(customer: string | undefined) {
    const order = await call('POST', '/v1/orders', orderBody(customer === undefined ? {} : { customer }));
    expect(order.statusCode, order.body).toBe(201);
    const orderId = order.json().id as string;
    const checkoutId = orderId.slice(4);
    const checkout = createClient(CheckoutService, createRouterTransport(core.routes));
    const headers = { 'checkout-token': await pageToken(core.routes, checkoutId) };
    const card = (behaviour: string) => ({ number: cardOf(shop, behaviour), expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: CVC, name: 'Ada Lovelace' });
    return {
      orderId,
      pay: (submissionId: string, behaviour: string, saveCard: boolean) => checkout.submitCardPayment({ checkoutId, submissionId, card: card(behaviour), saveCard }, { headers }),
      answer: (attemptId: string, answer: { code: string } | { abandon: true }) => checkout.completeAuthentication({ checkoutId, attemptId, ...answer }, { headers }),
    };
  }
  const held = (orderId: string) => db.knex('vault_tokens').where({ order_id: orderId });
  const cardsOf = async (customer: string) => (await call('GET', `/v1/customers/${customer}/cards`)).json().data as { last4: string }[];
  const refusal = (err: unknown) => ConnectError.from(err).findDetails(ErrorDetailSchema)[0]?.code;

  it('saves nothing from a refused submission, even when an earlier challenge is answered again (issue 19.1)', async () => {
    const customer = await newCustomer();
    const page = await pageOf(customer);
    const challenged = (await page.pay('sub-challenge', 'challenge', false)).outcome!;
    expect(challenged.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    const attemptId = challenged.challenge!.attemptId;
    expect((await page.answer(attemptId, { code: '123456' })).outcome!.status).toBe(PaymentStatus.SUCCEEDED);

    // The expired card, asked to be saved on the paid order: refused, and nothing of it is held.
    const refused = await page.pay('sub-expired', 'hard_decline', true).then(
      () => undefined,
      (err: unknown) => refusal(err),
    );
    expect(refused).toBe('order_already_paid');
    expect(await held(page.orderId)).toHaveLength(0);

    // The earlier challenge answered again still says succeeded, and saves nothing.
    expect((await page.answer(attemptId, { code: '123456' })).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await cardsOf(customer)).toEqual([]);
    expect(await db.knex('vault_cards').where({ customer_id: customer })).toHaveLength(0);
  });

  it('keeps nothing of a declined or abandoned payment; saves the card of the one that pays, failover and challenge included', async () => {
    const customer = await newCustomer();
    const page = await pageOf(customer);
    // A hard decline: the card is not kept.
    expect((await page.pay('sub-1', 'hard_decline', true)).outcome!.status).toBe(PaymentStatus.FAILED);
    expect(await held(page.orderId)).toHaveLength(0);
    // A challenge abandoned: the card held for its payment is dropped with it.
    const challenged = (await page.pay('sub-2', 'challenge', true)).outcome!;
    expect(challenged.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    expect(await held(page.orderId)).toHaveLength(1);
    expect((await page.answer(challenged.challenge!.attemptId, { abandon: true })).outcome!.status).toBe(PaymentStatus.FAILED);
    expect(await held(page.orderId)).toHaveLength(0);
    // A challenge left waiting, superseded by a payment that does not ask to save: neither card is saved,
    // and answering the old challenge afterwards (the order paid) saves nothing either.
    const waiting = (await page.pay('sub-3', 'challenge', true)).outcome!;
    expect(waiting.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);
    expect((await page.pay('sub-4', 'approved', false)).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await held(page.orderId)).toHaveLength(0);
    expect((await page.answer(waiting.challenge!.attemptId, { code: '123456' })).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    expect(await cardsOf(customer)).toEqual([]);

    // The soft decline is retried on the alternative route, which pays: that card is saved.
    const failover = await pageOf(customer);
    expect((await failover.pay('sub-1', 'soft_decline', true)).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    expect((await cardsOf(customer)).map((c) => c.last4)).toEqual([cardOf(shop, 'soft_decline').slice(-4)]);
    expect(await held(failover.orderId)).toHaveLength(0);
    // A challenge passed: the challenged card is saved, once the order is paid by it.
    const passed = await pageOf(customer);
    const asked = (await passed.pay('sub-1', 'challenge', true)).outcome!;
    expect(await cardsOf(customer)).toHaveLength(1);
    expect((await passed.answer(asked.challenge!.attemptId, { code: '123456' })).outcome!.status).toBe(PaymentStatus.SUCCEEDED);
    expect((await cardsOf(customer)).map((c) => c.last4)).toEqual([cardOf(shop, 'challenge').slice(-4), cardOf(shop, 'soft_decline').slice(-4)]);
    expect(await held(passed.orderId)).toHaveLength(0);
    expect(internalErrors).toEqual([]);
  });

  it('refuses to save a card for an order that names no customer, and starts no payment', async () => {
    const page = await pageOf(undefined);
    expect(await page.pay('sub-1', 'approved', true).then(() => undefined, refusal)).toBe('parameter_invalid');
    expect(await db.knex('payments').where({ order_id: page.orderId })).toHaveLength(0);
    expect(await held(page.orderId)).toHaveLength(0);
  });
});

describe('key rotation', () => {
  it('re-wraps every data key under the new KEK without touching a ciphertext, while cards keep charging', async () => {
    const customer = await newCustomer();
    const card = (await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'approved')) })).json();
    const before = await db.knex('vault_cards').where({ id: card.id }).first();
    expect(before.kek_id).toBe(OLD_KEK.id);
    // A webhook endpoint's signing secret is sealed under the same KEK, and rotated with the cards.
    const endpoint = (await call('POST', '/v1/webhook_endpoints', { url: 'https://shop.example/rotated' })).json();
    const secretBefore = await db.knex('webhook_endpoint_secrets').where({ endpoint_id: endpoint.id }).first();
    expect(secretBefore).toMatchObject({ kek_id: OLD_KEK.id, secret: null });

    // The operator adds the new KEK first and makes it active; the old one stays to decrypt.
    await app.close();
    await start([NEW_KEK, OLD_KEK], NEW_KEK.id);
    const fresh = (await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'dispute')) })).json();
    expect((await db.knex('vault_cards').where({ id: fresh.id }).first()).kek_id).toBe(NEW_KEK.id);
    // A card not re-wrapped yet still charges.
    const paidBefore = await call('POST', '/v1/orders', orderBody({ line_items: [], customer, card: card.id, confirm: true }));
    expect(paidBefore.json().status).toBe('paid');

    const counts = await core.rotateVaultKeys({ batchSize: 2 });
    expect(counts.rewrapped).toBeGreaterThan(0);
    expect(counts.batches).toBeGreaterThan(1);
    expect(Object.keys(counts.after)).toEqual([NEW_KEK.id]);
    const after = await db.knex('vault_cards').where({ id: card.id }).first();
    expect(after.kek_id).toBe(NEW_KEK.id);
    expect(Buffer.compare(after.ciphertext, before.ciphertext)).toBe(0);
    expect(Buffer.compare(after.wrapped_key, before.wrapped_key)).not.toBe(0);
    const secretAfter = await db.knex('webhook_endpoint_secrets').where({ endpoint_id: endpoint.id }).first();
    expect(secretAfter.kek_id).toBe(NEW_KEK.id);
    expect(Buffer.compare(secretAfter.ciphertext, secretBefore.ciphertext)).toBe(0);
    expect((await core.rotateVaultKeys()).rewrapped).toBe(0);

    // The old KEK can go now: every card opens under the new one alone (fingerprints unchanged).
    await app.close();
    await start([NEW_KEK], NEW_KEK.id);
    const paidAfter = await call('POST', '/v1/orders', orderBody({ line_items: [], customer, card: card.id, confirm: true }));
    expect(paidAfter.json().status).toBe('paid');
    const again = (await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'approved')) })).json();
    expect(again.fingerprint).toBe(card.fingerprint);
    // The re-wrapped signing secret opens under the new KEK alone: the same secret signs.
    const stored = await new PostgresWebhookEndpointRepository(db.knex).activeSecrets(endpoint.id, new Date());
    expect(createSigningSecrets(createAesGcmKeyRing({ keys: [NEW_KEK], configured: true })).open(stored, endpoint.id)).toEqual([endpoint.secret]);
  });
});

describe('no card number leaks', () => {
  it('finds no test card number nor CVC, and no webhook signing secret, in any table, log line or event of the run', async () => {
    // A run of every path that handles a number: vault by raw fields and by token, charge, delete.
    const customer = await newCustomer();
    const viaRaw = (await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'approved')) })).json();
    const token = (await call('POST', '/v1/tokens', { card: rawCard(cardOf(shop, 'soft_decline')) }, shop.test_publishable_key)).json().id;
    const viaToken = (await call('POST', `/v1/customers/${customer}/cards`, { token })).json();
    await call('POST', '/v1/tokens', { card: rawCard(cardOf(shop, 'approved')) }, shop.test_publishable_key); // left unused
    for (let i = 0; i < 2; i++) await call('POST', '/v1/tokens', { card: rawCard(cardOf(shop, 'dispute')) }, shop.test_publishable_key, { 'idempotency-key': 'leak-token' }); // keyed, replayed
    await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'challenge')) }, shop.test_secret_key, { 'idempotency-key': 'leak-card' }); // keyed raw fields
    await call('POST', '/v1/customers/cus_x/cards', { card: rawCard(cardOf(shop, 'approved')) }); // refused
    await call('POST', `/v1/customers/${customer}/cards`, { card: rawCard(cardOf(shop, 'hard_decline')) }); // declined
    for (const card of [viaRaw, viaToken]) {
      expect((await call('POST', '/v1/orders', orderBody({ line_items: [], customer, card: card.id, confirm: true }))).json().status).toBe('paid');
    }
    await call('DELETE', `/v1/customers/${customer}/cards/${viaRaw.id}`);
    await call('DELETE', `/v1/customers/${customer}`);
    // Webhook signing secrets: the sandboxes', and an endpoint's created and rotated under Idempotency-Keys,
    // each repeated (the repeat answers the same secret, read back sealed).
    const signingSecrets = [shop.webhook_secret, shop.live_webhook_secret, other.webhook_secret, other.live_webhook_secret];
    for (let i = 0; i < 2; i++) {
      const endpoint = await call('POST', '/v1/webhook_endpoints', { url: 'https://shop.example/hooks', enabled_events: ['*'] }, shop.test_secret_key, { 'idempotency-key': 'leak-endpoint' });
      expect(endpoint.statusCode, endpoint.body).toBe(201);
      signingSecrets.push(endpoint.json().secret);
      const rotated = await call('POST', `/v1/webhook_endpoints/${endpoint.json().id}/rotate_secret`, {}, shop.test_secret_key, { 'idempotency-key': 'leak-rotate' });
      expect(rotated.statusCode, rotated.body).toBe(200);
      signingSecrets.push(rotated.json().secret);
    }
    expect(new Set(signingSecrets).size, 'a repeat answers the same secret').toBe(6);
    for (const secret of signingSecrets) expect(secret).toMatch(/^whsec_/);

    const secrets = [...shop.test_cards, ...other.test_cards].flatMap((c) => [c.number, c.number.replace(/(\d{4})(?=\d)/g, '$1 ')]);
    const haystacks: Array<[string, string]> = [];
    const tables = (await db.knex.raw(`SELECT tablename FROM pg_tables WHERE schemaname = 'public'`)).rows as { tablename: string }[];
    for (const { tablename } of tables) {
      // Every column as text; bytea as hex and as its raw bytes (latin1), so a number stored in the clear in a binary column shows too.
      const rows = (await db.knex.raw(`SELECT t::text AS row FROM ?? t`, [tablename])).rows as { row: string }[];
      for (const { row } of rows) {
        haystacks.push([`table ${tablename}`, row]);
        for (const hex of row.match(/\\\\x[0-9a-f]+/g) ?? []) haystacks.push([`table ${tablename} (bytea)`, Buffer.from(hex.slice(3), 'hex').toString('latin1')]);
      }
    }
    expect(tables.map((t) => t.tablename)).toEqual(expect.arrayContaining(['vault_cards', 'vault_tokens', 'customers', 'orders', 'events', 'idempotency_keys', 'payment_attempts', 'webhook_endpoint_secrets']));
    for (const line of logLines) haystacks.push(['log', line]);
    for (const event of await db.knex('events').select('type', 'data')) haystacks.push([`event ${event.type}`, JSON.stringify(event.data)]);
    expect(logLines.length).toBeGreaterThan(20);
    for (const [where, text] of haystacks) {
      for (const secret of secrets) expect(text.includes(secret), `${where} holds a card number`).toBe(false);
      // The CVC as a value: quoted, or a whole field of a row.
      expect(/"987"|[(,]987[,)]/.test(text), `${where} holds the CVC`).toBe(false);
      // Signing secrets are answered once by design (and this test logs every answer): at rest, none.
      if (where === 'log') continue;
      expect(text.includes('whsec_'), `${where} holds a webhook signing secret`).toBe(false);
      for (const secret of signingSecrets) expect(text.includes(secret.slice('whsec_'.length)), `${where} holds a webhook signing secret`).toBe(false);
    }
    expect(internalErrors).toEqual([]);
  });
});
