// The Medusa payment provider (@hosted-checkout/medusa) against the real service, used as Medusa's payment module
// uses it: the package packed and installed from its tarball into a Medusa 2 project (test/support/medusa.ts), its
// default export's service checked and constructed with Medusa's real @medusajs/framework as Medusa's provider
// loader does (validateOptions, then new Service(container, options)), and each method called with the inputs the
// payment module passes (the session's id as data.session_id and idempotency key, a capture's, a refund's). The
// service runs in this process on its own database; its signed webhooks reach a receiver on loopback, and their raw
// bytes and headers go to getWebhookActionAndData as Medusa's /hooks/payment route hands them over.
// test/medusa-plugin.test.ts boots a whole Medusa server with it.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCurrency } from '../src/kernel/domain/currency.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { createMedusaShop, ensureMedusaApp, packMedusaPackages, type MedusaShop } from './support/medusa.ts';
import { payWithTestCard } from './support/payments.ts';
import { requires } from './support/requirements.ts';
import { waitFor } from './support/wait.ts';
import { api, createEndpoint, payOrder, Receiver, startHarness, type Harness, type ReceivedRequest } from './support/webhooks.ts';
import type * as MedusaPackage from '../sdk/medusa/index.ts';

type Provider = InstanceType<typeof MedusaPackage.HostedCheckoutProviderService>;
type SessionData = Record<string, unknown> & { checkout_order_id: string };

const EVENTS = ['order.paid', 'order.authorized', 'order.failed', 'order.expired', 'order.refunded', 'order.voided'];
const timings: string[] = [];
const work = mkdtempSync(path.join(tmpdir(), 'hosted-checkout-medusa-provider-'));
let h: Harness;
let shop: MedusaShop;
let pkg: typeof MedusaPackage;
let merchant: SandboxCredentials;
let receiver: Receiver;
let webhookSecret: string;
let options: MedusaPackage.HostedCheckoutOptions;

async function timed<T>(label: string, step: () => Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings.push(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}

/** The provider as Medusa's payment module makes it (loaders/providers.ts: validateOptions, then new klass(cradle, options)). */
function provider(extra: Partial<MedusaPackage.HostedCheckoutOptions> = {}): Provider {
  const Service = pkg.default.services[0] as typeof MedusaPackage.HostedCheckoutProviderService;
  Service.validateOptions({ ...options, ...extra });
  return new Service({ logger: console }, { ...options, ...extra });
}

/** A payment session id as Medusa makes them (payses_ and a ULID). */
function sessionId(): string {
  return `payses_01${randomBytes(12).toString('hex').toUpperCase().slice(0, 24)}`;
}

/** The delivery of an event of an order to the receiver, once it is there. */
function delivery(orderId: string, type: string): Promise<ReceivedRequest> {
  return waitFor(`${type} of ${orderId} delivered`, () => receiver.requests.find((r) => r.body.type === type && r.body.data.id === orderId), (r): r is ReceivedRequest => r !== undefined, 30_000, 50) as Promise<ReceivedRequest>;
}

/** What Medusa's /hooks/payment/<provider> route hands the provider: the parsed body, the raw bytes and the headers. */
function hookPayload(request: ReceivedRequest, overrides: { raw?: Buffer; headers?: Record<string, unknown> } = {}) {
  const raw = overrides.raw ?? request.raw;
  return { data: JSON.parse(raw.toString('utf8')) as Record<string, unknown>, rawData: raw, headers: overrides.headers ?? { ...request.headers } };
}

async function order(id: string) {
  return (await api<{ status: string; reference: string; amount: number; currency: string; amount_captured: number | null; amount_refunded: number; capture_method: string }>(h.base, merchant.test_secret_key, 'GET', `/v1/orders/${id}`)).json;
}

beforeAll(async () => {
  if (requires('medusa').skip) return;
  // The service, the Medusa project (installed once into a cache) and the tarballs at once.
  const [harness, , tarballs] = await Promise.all([
    timed('service start', () => startHarness()),
    timed('Medusa project (npm ci into the cache, or found there)', () => ensureMedusaApp()),
    timed('npm pack sdk/node sdk/medusa', () => packMedusaPackages(path.join(work, 'tarballs'))),
  ]);
  h = harness;
  shop = await timed('npm install of the tarballs into the Medusa project', () => createMedusaShop('medusa-provider', [tarballs.node, tarballs.medusa]));
  // The package as Medusa loads it: from the project's node_modules, its imports of @medusajs/framework resolving there.
  pkg = (await import(pathToFileURL(path.join(shop.dir, 'node_modules', '@hosted-checkout', 'medusa', 'dist', 'index.js')).href)) as typeof MedusaPackage;
  merchant = await h.merchant('Medusa provider');
  receiver = await Receiver.start();
  webhookSecret = (await createEndpoint(h.base, merchant.test_secret_key, receiver.url(), EVENTS)).secret;
  options = { baseUrl: h.base, secretKey: merchant.test_secret_key, webhookSecret, returnUrl: 'https://shop.example/checkout/done' };
}, 900_000);

afterAll(async () => {
  await receiver?.close();
  await h?.close();
  shop?.remove();
  rmSync(work, { recursive: true, force: true });
  if (timings.length > 0) console.log(`medusa-provider timings:\n  ${timings.join('\n  ')}`);
});

describe('@hosted-checkout/medusa as Medusa\'s payment module calls it, against the real service', requires('medusa'), () => {
  it('is a payment module provider of one service, extending Medusa\'s AbstractPaymentProvider, whose options are checked', async () => {
    // Medusa's own framework, where the shop's imports of @medusajs/framework/utils resolve (the cached project's).
    const framework = (await import(pathToFileURL(path.join(shop.dir, '..', '..', 'node_modules', '@medusajs', 'framework', 'dist', 'utils', 'index.js')).href)) as { AbstractPaymentProvider: abstract new (...args: never[]) => unknown };
    expect(pkg.default.module).toBe('payment');
    expect(pkg.default.services).toHaveLength(1);
    expect(pkg.default.services[0]!.prototype).toBeInstanceOf(framework.AbstractPaymentProvider);
    expect((pkg.default.services[0] as unknown as { identifier: string }).identifier).toBe('hosted-checkout');
    expect(() => provider({ secretKey: merchant.test_publishable_key })).toThrow(/publishable key/);
    expect(() => provider({ webhookSecret: 'nope' })).toThrow(/whsec_/);
  });

  it('automatic capture: initiate makes our order (reference = session), authorize follows it to captured, a partial refund, and the real webhooks map to Medusa\'s actions', { timeout: 120_000 }, async () => {
    const p = provider();
    const session = sessionId();
    const input = { amount: 25.99, currency_code: 'eur', data: { session_id: session }, context: { idempotency_key: session } };
    const initiated = await p.initiatePayment(input);
    const data = initiated.data as SessionData;
    expect(initiated).toMatchObject({ id: expect.stringMatching(/^ord_/), status: 'pending' });
    expect(data).toMatchObject({ checkout_order_id: initiated.id, session_id: session, client_secret: expect.stringMatching(/_secret_/), checkout_url: expect.stringMatching(/^https?:\/\/[^/]+\/c\/\w+$/), amount: 2599, currency: 'EUR' });
    expect(await order(initiated.id)).toMatchObject({ reference: session, amount: 2599, currency: 'EUR', status: 'pending', capture_method: 'automatic' });
    // Medusa retrying the same session's initiation gets the same order (Idempotency-Key medusa:<session>:create).
    const again = await p.initiatePayment(input);
    expect(again.id).toBe(initiated.id);

    // Not paid yet: completing the cart must wait for the customer.
    expect(await p.authorizePayment({ data, context: { idempotency_key: session } })).toMatchObject({ status: 'requires_more' });
    // Another session's id does not authorize this order.
    await expect(p.authorizePayment({ data, context: { idempotency_key: sessionId() } })).rejects.toThrow(/belongs to payment session/);

    await payOrder(h.base, merchant.test_secret_key, initiated.id);
    const authorized = await p.authorizePayment({ data, context: { idempotency_key: session } });
    expect(authorized.status).toBe('captured');
    expect(authorized.data).toMatchObject({ checkout_status: 'paid', session_id: session });
    expect(authorized.data).not.toHaveProperty('client_secret');
    expect(await p.getPaymentStatus({ data: authorized.data })).toMatchObject({ status: 'captured' });
    // Captured already (automatic capture): Medusa's capture is answered as it is.
    expect((await p.capturePayment({ data: authorized.data, context: { idempotency_key: 'capt_01AUTO' } })).data).toMatchObject({ checkout_status: 'paid' });

    const paid = await delivery(initiated.id, 'order.paid');
    expect(await p.getWebhookActionAndData(hookPayload(paid))).toEqual({ action: 'captured', data: { session_id: session, amount: '25.99' } });

    // A partial refund, retried by Medusa with the same refund id: one refund of 5.00.
    const refundInput = { data: authorized.data!, amount: 5, context: { idempotency_key: `refund_${randomBytes(6).toString('hex')}` } };
    const refunded = await p.refundPayment(refundInput);
    expect(refunded.data).toMatchObject({ checkout_status: 'partially_refunded', amount_refunded: 500, last_refund_status: 'succeeded' });
    expect((await p.refundPayment(refundInput)).data).toMatchObject({ amount_refunded: 500 });
    expect(await order(initiated.id)).toMatchObject({ status: 'partially_refunded', amount_refunded: 500 });
    const refundEvent = await delivery(initiated.id, 'order.refunded');
    expect(await p.getWebhookActionAndData(hookPayload(refundEvent))).toEqual({ action: 'not_supported', data: { session_id: session, amount: '5' } });
    // More than is left is refused with the service's reason.
    await expect(p.refundPayment({ data: authorized.data!, amount: 30, context: { idempotency_key: 'refund_too_much' } })).rejects.toThrow(/refused to refund the order/);
  });

  it('a webhook whose signature, timestamp or body does not verify is refused, and none maps to an action', { timeout: 60_000 }, async () => {
    const p = provider();
    const session = sessionId();
    const initiated = await p.initiatePayment({ amount: '12.00', currency_code: 'eur', data: { session_id: session }, context: { idempotency_key: session } });
    await payOrder(h.base, merchant.test_secret_key, initiated.id);
    const paid = await delivery(initiated.id, 'order.paid');
    expect((await p.getWebhookActionAndData(hookPayload(paid))).action).toBe('captured');

    const header = paid.signature;
    const forged = `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`;
    await expect(p.getWebhookActionAndData(hookPayload(paid, { headers: { ...paid.headers, 'checkout-signature': forged } }))).rejects.toMatchObject({ name: 'WebhookVerificationError', reason: 'signature_mismatch' });
    // The same signature over a body changed to name another session: refused.
    const tampered = Buffer.from(paid.raw.toString('utf8').replace(session, sessionId()));
    await expect(p.getWebhookActionAndData(hookPayload(paid, { raw: tampered, headers: { 'checkout-signature': header } }))).rejects.toMatchObject({ reason: 'signature_mismatch' });
    await expect(p.getWebhookActionAndData(hookPayload(paid, { headers: {} }))).rejects.toMatchObject({ name: 'WebhookVerificationError' });
    // Signed with another endpoint's secret.
    const other = provider({ webhookSecret: 'whsec_someoneelse0000000000' });
    await expect(other.getWebhookActionAndData(hookPayload(paid))).rejects.toMatchObject({ reason: 'signature_mismatch' });
    // No raw body (a route that parsed JSON only): refused, not verified against a re-serialisation.
    await expect(p.getWebhookActionAndData({ data: paid.body, rawData: undefined as never, headers: paid.headers })).rejects.toThrow(/raw body/);
  });

  it('manual capture: authorized, then captured from Medusa (once), refunded in part; order.authorized and order.paid map to authorized and captured', { timeout: 120_000 }, async () => {
    const p = provider({ captureMethod: 'manual' });
    const session = sessionId();
    const initiated = await p.initiatePayment({ amount: { value: '40', precision: 20 }, currency_code: 'eur', data: { session_id: session }, context: { idempotency_key: session } });
    expect(await order(initiated.id)).toMatchObject({ capture_method: 'manual', amount: 4000 });
    await payWithTestCard(h.service.core.routes, merchant, initiated.id);
    const authorized = await p.authorizePayment({ data: initiated.data, context: { idempotency_key: session } });
    expect(authorized).toMatchObject({ status: 'authorized', data: { checkout_status: 'authorized' } });
    const authorizedEvent = await delivery(initiated.id, 'order.authorized');
    expect(await p.getWebhookActionAndData(hookPayload(authorizedEvent))).toEqual({ action: 'authorized', data: { session_id: session, amount: '40' } });

    const captured = await p.capturePayment({ data: authorized.data, context: { idempotency_key: 'capt_01FIRST' } });
    expect(captured.data).toMatchObject({ checkout_status: 'paid', amount_captured: 4000 });
    // A second capture of Medusa's (a partial capture's rest) finds it captured: nothing more is taken.
    expect((await p.capturePayment({ data: captured.data, context: { idempotency_key: 'capt_01SECOND' } })).data).toMatchObject({ checkout_status: 'paid', amount_captured: 4000 });
    const paidEvent = await delivery(initiated.id, 'order.paid');
    expect(await p.getWebhookActionAndData(hookPayload(paidEvent))).toEqual({ action: 'captured', data: { session_id: session, amount: '40' } });

    const refunded = await p.refundPayment({ data: captured.data!, amount: '12.5', context: { idempotency_key: 'refund_01MANUAL' } });
    expect(refunded.data).toMatchObject({ checkout_status: 'partially_refunded', amount_refunded: 1250 });
    expect(await order(initiated.id)).toMatchObject({ status: 'partially_refunded', amount_captured: 4000, amount_refunded: 1250 });
  });

  it('a payment under way is pending, a declined one requires more (order.failed maps to failed), and an uncaptured authorization cannot be captured once voided', { timeout: 120_000 }, async () => {
    const p = provider();
    const session = sessionId();
    const initiated = await p.initiatePayment({ amount: 9, currency_code: 'eur', data: { session_id: session }, context: { idempotency_key: session } });
    // A 3-D Secure challenge the customer has not answered yet.
    await payWithTestCard(h.service.core.routes, merchant, initiated.id, { behaviour: 'challenge', submissionId: `sub-${session}-1` });
    expect(await p.getPaymentStatus({ data: initiated.data })).toMatchObject({ status: 'pending' });

    const declinedSession = sessionId();
    const declined = await p.initiatePayment({ amount: 9, currency_code: 'eur', data: { session_id: declinedSession }, context: { idempotency_key: declinedSession } });
    // A decline is the checkout's answer, not an error of the call; either way the order is failed.
    await payWithTestCard(h.service.core.routes, merchant, declined.id, { behaviour: 'hard_decline' }).catch(() => undefined);
    expect(await p.authorizePayment({ data: declined.data, context: { idempotency_key: declinedSession } })).toMatchObject({ status: 'requires_more', data: { checkout_status: 'failed' } });
    const failed = await delivery(declined.id, 'order.failed');
    expect(await p.getWebhookActionAndData(hookPayload(failed))).toEqual({ action: 'failed', data: { session_id: declinedSession, amount: '9' } });

    const manual = provider({ captureMethod: 'manual' });
    const manualSession = sessionId();
    const held = await manual.initiatePayment({ amount: 15, currency_code: 'eur', data: { session_id: manualSession }, context: { idempotency_key: manualSession } });
    await payWithTestCard(h.service.core.routes, merchant, held.id);
    const voided = await manual.cancelPayment({ data: held.data, context: { idempotency_key: 'pay_01CANCEL' } });
    expect(voided.data).toMatchObject({ checkout_status: 'voided' });
    await expect(manual.capturePayment({ data: voided.data, context: { idempotency_key: 'capt_01LATE' } })).rejects.toThrow(/voided: there is no authorized payment to capture/);
    const voidEvent = await delivery(held.id, 'order.voided');
    expect(await manual.getWebhookActionAndData(hookPayload(voidEvent))).toEqual({ action: 'canceled', data: { session_id: manualSession, amount: '15' } });
  });

  it('cancel and delete: an unpaid order is expired (its checkout refuses payment), a paid one voided; a new amount replaces an unpaid order', { timeout: 120_000 }, async () => {
    const p = provider();
    const session = sessionId();
    const initiated = await p.initiatePayment({ amount: 10, currency_code: 'eur', data: { session_id: session }, context: { idempotency_key: session } });

    // The cart's total changed: the order is replaced by one of the new amount, once however often Medusa retries.
    const update = { data: initiated.data, amount: 12, currency_code: 'eur', context: { idempotency_key: session } };
    const updated = await p.updatePayment(update);
    const replacement = (updated.data as SessionData).checkout_order_id;
    expect(replacement).not.toBe(initiated.id);
    expect(((await p.updatePayment(update)).data as SessionData).checkout_order_id).toBe(replacement);
    expect(await order(initiated.id)).toMatchObject({ status: 'expired' });
    expect(await order(replacement)).toMatchObject({ status: 'pending', amount: 1200, reference: session });
    expect(((await p.updatePayment({ ...update, data: updated.data })).data as SessionData).checkout_order_id).toBe(replacement);

    const canceled = await p.cancelPayment({ data: updated.data, context: { idempotency_key: 'pay_01EXPIRE' } });
    expect(canceled.data).toMatchObject({ checkout_status: 'expired' });
    const late = await api(h.base, merchant.test_secret_key, 'POST', `/v1/test_helpers/orders/${replacement}/simulate_transfer`);
    expect(late.status).toBeGreaterThanOrEqual(400);
    expect(await order(replacement)).toMatchObject({ status: 'expired' });
    const expired = await delivery(replacement, 'order.expired');
    expect(await p.getWebhookActionAndData(hookPayload(expired))).toEqual({ action: 'canceled', data: { session_id: session, amount: '12' } });

    // A session deleted after its order was paid (the cart changed meanwhile): the money goes back.
    const paidSession = sessionId();
    const paid = await p.initiatePayment({ amount: 7, currency_code: 'eur', data: { session_id: paidSession }, context: { idempotency_key: paidSession } });
    await payOrder(h.base, merchant.test_secret_key, paid.id);
    expect((await p.deletePayment({ data: paid.data })).data).toMatchObject({ checkout_status: 'voided' });
    expect(await p.getPaymentStatus({ data: paid.data })).toMatchObject({ status: 'canceled' });
    // A session whose initiation failed has no order: nothing to delete.
    expect(await p.deletePayment({ data: { session_id: sessionId() } })).toEqual({ data: { session_id: expect.any(String) } });
    // The service's refusals reach Medusa as invalid data, with the reason.
    await expect(p.initiatePayment({ amount: 0, currency_code: 'eur', data: { session_id: sessionId() } })).rejects.toMatchObject({ type: 'invalid_data', message: expect.stringMatching(/refused to create the order/) });
  });

  it('converts amounts with the service\'s own table of currency exponents', () => {
    const letters = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    let known = 0;
    for (const a of letters) for (const b of letters) for (const c of letters) {
      const currency = findCurrency(`${a}${b}${c}`);
      if (!currency) continue;
      known += 1;
      expect(pkg.currencyExponent(currency.code), currency.code).toBe(currency.exponent);
    }
    expect(known).toBeGreaterThan(150);
    expect(pkg.toMinorUnits(1234.5, 'JPY')).toBe(1235);
    expect(pkg.toMinorUnits('1.2345', 'BHD')).toBe(1235);
  });
});
