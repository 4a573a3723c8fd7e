// The mobile SDK (sdk/mobile) against the real service listening on 127.0.0.1, over Connect and over gRPC-Web:
// every test path of the sandbox's cards, a bank transfer arriving while the app waits, and a connection
// killed after the server processed the payment (the retry reuses the submission id: one payment only).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCheckoutSession, type CardInput, type PaymentResult } from '../sdk/mobile/index.ts';
import { api, startHarness, type Harness } from './support/webhooks.ts';
import { orderBody } from './support/order-fixtures.ts';

let h: Harness;

beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

interface CreatedOrder { id: string; client_secret: string }
interface OrderView { id: string; status: string; method: string | null; amount_captured: number | null; attempts: Array<{ id: string; status: string; route: string; decline_code: string | null; retry: boolean }> }

async function createOrder(reference: string): Promise<CreatedOrder> {
  const res = await api<CreatedOrder>(h.base, h.sandbox.test_secret_key, 'POST', '/v1/orders', orderBody({ reference }));
  expect(res.status).toBe(201);
  return res.json;
}

async function retrieve(id: string): Promise<OrderView> {
  const res = await api<OrderView>(h.base, h.sandbox.test_secret_key, 'GET', `/v1/orders/${id}`);
  expect(res.status).toBe(200);
  return res.json;
}

/** A URL on the checkout host, moved to the service under test (the harness's checkout host names no port). */
function onService(url: string): URL {
  const moved = new URL(url);
  const base = new URL(h.base);
  moved.protocol = base.protocol;
  moved.host = base.host;
  return moved;
}

function card(behaviour: string): CardInput {
  const c = h.sandbox.test_cards.find((t) => t.behaviour === behaviour);
  if (!c) throw new Error(`no ${behaviour} test card`);
  return { number: c.number, expMonth: 12, expYear: new Date().getUTCFullYear() + 2, cvc: '123', name: 'Ada Lovelace' };
}

for (const protocol of ['connect', 'grpc-web'] as const) {
  describe(`the mobile SDK over ${protocol}`, () => {
    const session = (order: CreatedOrder, fetch?: typeof globalThis.fetch) =>
      createCheckoutSession({ baseUrl: h.base, publishableKey: h.sandbox.test_publishable_key, clientSecret: order.client_secret, protocol, ...(fetch ? { fetch } : {}) });

    it('loads the order and its methods with the client secret', async () => {
      const order = await createOrder(`m-load-${protocol}`);
      const state = await session(order).load();
      expect(state.order).toEqual({ id: order.id, reference: `m-load-${protocol}`, amount: 2500, currency: 'EUR', status: 'pending' });
      expect(state.methods).toContain('card');
      expect(state.methods).toContain('bank_transfer');
      expect(state.testMode).toBe(true);
    });

    it('refuses a wrong client secret as unauthenticated', async () => {
      const order = await createOrder(`m-bad-${protocol}`);
      const bad = { ...order, client_secret: `${order.id}_secret_${'x'.repeat(40)}` };
      await expect(session(bad).load()).rejects.toMatchObject({ name: 'CheckoutSessionError', code: 'unauthenticated' });
      const paid = await session(bad).payWithCard(card('approved'));
      expect(paid).toMatchObject({ kind: 'failed', reason: 'refused', code: 'unauthenticated' });
    });

    it('approved → paid', async () => {
      const order = await createOrder(`m-ok-${protocol}`);
      const s = session(order);
      const result = await s.payWithCard(card('approved'));
      expect(result).toMatchObject({ kind: 'paid', order: { id: order.id, status: 'paid', amount: 2500 } });
      expect(await s.waitForResult({ timeoutMs: 2000, pollMs: 100 })).toMatchObject({ kind: 'paid' });
      expect((await retrieve(order.id)).status).toBe('paid');
    });

    it('challenge → answer 123456 → paid', async () => {
      const order = await createOrder(`m-3ds-${protocol}`);
      const s = session(order);
      const first = await s.payWithCard(card('challenge'));
      expect(first.kind).toBe('challenge');
      const challenge = first as Extract<PaymentResult, { kind: 'challenge' }>;
      expect(challenge.attemptId).toMatch(/^att_/);
      expect(challenge.hint).not.toBe('');
      const done = await s.answerChallenge(challenge.attemptId, '123456');
      expect(done).toMatchObject({ kind: 'paid', order: { id: order.id, status: 'paid' } });
      expect((await retrieve(order.id)).attempts.map((a) => a.status)).toEqual(['succeeded']);
    });

    it('challenge by redirect: the issuer page in a browser, its return leg intercepted → completeRedirect → paid', async () => {
      const order = await createOrder(`m-3ds-redirect-${protocol}`);
      const s = session(order);
      const first = (await s.payWithCard(card('challenge'))) as Extract<PaymentResult, { kind: 'challenge' }>;
      expect(first.redirect).toMatchObject({ method: 'GET', url: expect.stringContaining('/simulator/issuer/') });
      // What the browser the app opens does: load the issuer page, answer it, and be sent to the return leg.
      const url = onService(first.redirect!.url);
      const page = await fetch(url);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('123456');
      const answered = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'code=123456' });
      expect(answered.status).toBe(303);
      const back = new URL(answered.headers.get('location')!);
      expect(back.pathname).toBe(`/c/${order.id.slice(4)}/return/${first.attemptId}`);
      const done = await s.completeRedirect(first.attemptId, Object.fromEntries(back.searchParams));
      expect(done).toMatchObject({ kind: 'paid', order: { id: order.id, status: 'paid' } });
    });

    // The browser's part does not depend on the app's protocol: once (the sandbox's card-testing limit counts every submission of 127.0.0.1).
    if (protocol === 'connect') {
      it('challenge by redirect, the return leg left to the browser: the payment completes there and waitForResult sees it', async () => {
        const order = await createOrder(`m-3ds-return-${protocol}`);
        const s = session(order);
        const first = (await s.payWithCard(card('challenge'))) as Extract<PaymentResult, { kind: 'challenge' }>;
        const answered = await fetch(onService(first.redirect!.url), { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'code=000000' });
        const returned = await fetch(onService(answered.headers.get('location')!), { redirect: 'manual' });
        expect(returned.status).toBe(303);
        expect(await s.waitForResult({ timeoutMs: 5000, pollMs: 100 })).toMatchObject({ kind: 'declined', code: 'authentication_failed' });
      });
    }

    it('challenge abandoned → declined, the customer may try again', async () => {
      const order = await createOrder(`m-3ds-ab-${protocol}`);
      const s = session(order);
      const first = (await s.payWithCard(card('challenge'))) as Extract<PaymentResult, { kind: 'challenge' }>;
      expect(first.kind).toBe('challenge');
      const abandoned = await s.abandonChallenge(first.attemptId);
      expect(abandoned.kind).toBe('declined');
      expect(await s.payWithCard(card('approved'))).toMatchObject({ kind: 'paid' });
    });

    it('soft_decline → paid on the alternative route (the server retries it once)', async () => {
      const order = await createOrder(`m-soft-${protocol}`);
      const result = await session(order).payWithCard(card('soft_decline'));
      expect(result).toMatchObject({ kind: 'paid', order: { status: 'paid' } });
      const attempts = (await retrieve(order.id)).attempts;
      expect(attempts.map((a) => [a.route, a.status, a.retry])).toEqual([
        ['simulated_alpha', 'failed', false],
        ['simulated_beta', 'succeeded', true],
      ]);
    });

    it('hard_decline → declined with a code the customer can act on', async () => {
      const order = await createOrder(`m-hard-${protocol}`);
      const s = session(order);
      const result = await s.payWithCard(card('hard_decline'));
      expect(result).toMatchObject({ kind: 'declined', code: 'expired_card' });
      expect((result as { message: string }).message).not.toBe('');
      expect(await s.waitForResult({ timeoutMs: 1000, pollMs: 100 })).toMatchObject({ kind: 'declined', code: 'expired_card' });
      const state = await s.load();
      expect(state.order.status).toBe('failed');
      expect(state.lastFailure?.code).toBe('expired_card');
    });

    it('transfer: the app waits, the transfer arrives → paid', async () => {
      const order = await createOrder(`m-transfer-${protocol}`);
      const s = session(order);
      const state = await s.load();
      expect(state.bankTransfer?.iban).toBeTruthy();
      const waiting = s.waitForResult({ timeoutMs: 10_000, pollMs: 100 });
      await new Promise((r) => setTimeout(r, 300));
      const res = await api(h.base, h.sandbox.test_secret_key, 'POST', `/v1/test_helpers/orders/${order.id}/simulate_transfer`);
      expect(res.status).toBe(200);
      expect(await waiting).toMatchObject({ kind: 'paid', order: { id: order.id, status: 'paid' } });
    });

    it('a connection killed after the server paid: the retry reuses the submission id, one payment only', async () => {
      const order = await createOrder(`m-kill-${protocol}`);
      const submissions: string[] = [];
      let dropped = 0;
      const flaky: typeof globalThis.fetch = async (input, init) => {
        const url = String(input instanceof Request ? input.url : input);
        expect(new URL(url).hostname).toBe('127.0.0.1');
        if (url.endsWith('/SubmitCardPayment')) {
          submissions.push(String(init?.body instanceof Uint8Array ? new TextDecoder().decode(init.body) : init?.body));
          if (dropped === 0) {
            dropped++;
            const res = await fetch(input, init);
            await res.arrayBuffer(); // the server has answered: the payment is processed
            throw new TypeError('network');
          }
        }
        return fetch(input, init);
      };
      const result = await session(order, flaky).payWithCard(card('approved'));
      expect(dropped).toBe(1);
      expect(submissions).toHaveLength(2);
      expect(submissions[1]).toBe(submissions[0]); // the same request: same submission id
      expect(result).toMatchObject({ kind: 'paid', order: { id: order.id, status: 'paid' } });
      const view = await retrieve(order.id);
      expect(view.status).toBe('paid');
      expect(view.attempts).toHaveLength(1);
      expect(view.attempts[0]!.status).toBe('succeeded');
      expect(view.amount_captured).toBe(2500);
    });
  });
}
