/**
 * One reference end to end (guarantee 3 of the spec), after the payment as well: the real service
 * (gateway on a local port, outbox relay to the run's JetStream or, without NATS, to the event stream
 * in Postgres, webhook dispatcher) takes an order with the merchant's reference, a customer pays it on
 * the hosted checkout in Debian's Chromium, and the same reference then shows on the signed order.paid webhook, a partial refund and
 * its order.refunded webhook, a dispute and its order.disputed webhook (with the evidence attached
 * before), the payout and payout.settled, the payout's items and its CSV line. The ledger is
 * verified at the end.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { verifyWebhook } from '../sdk/index.ts';
import { launchBrowser } from './support/browser.ts';
import { freePort } from './support/nats-server.ts';
import { orderBody } from './support/order-fixtures.ts';
import { waitFor } from './support/wait.ts';
import { api, createEndpoint, Receiver, startHarness, type Harness } from './support/webhooks.ts';
import { requires } from './support/requirements.ts';

const REFERENCE = 'ORDER-2026-0042,"tea"';
const WAIT_MS = 20_000;

let h: Harness;
let receiver: Receiver;
let browser: Browser;

beforeAll(async () => {
  // The checkout URLs the service hands out must point at the port it listens on.
  const port = await freePort();
  h = await startHarness({ env: { PORT: String(port), PUBLIC_URL: `http://127.0.0.1:${port}`, CHECKOUT_URL: `http://127.0.0.1:${port}` } });
  receiver = await Receiver.start();
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  const broken = h ? await h.service.core.ledger.verify() : undefined;
  await h?.close();
  if (broken) throw new Error(`ledger invariant broken: ${broken.invariant}: ${broken.detail}`);
});

describe('one reference from the checkout to the payout', requires('chromium'), () => {
  test('checkout, order.paid, a partial refund, a dispute, the payout, payout.settled and the CSV line all carry it', async () => {
    const key = h.sandbox.test_secret_key;
    const endpoint = await createEndpoint(h.base, key, receiver.url(), ['*']);
    /** The signed, verified deliveries of one event type (the SDK's verifier, as a merchant would). */
    const delivered = (type: string) =>
      receiver.requests.filter((r) => r.body.type === type && r.nth === 0).map((r) => verifyWebhook(r.raw, r.signature, endpoint.secret));
    const awaitEvent = (type: string) => waitFor(`a ${type} webhook`, () => delivered(type), (list) => list.length > 0, WAIT_MS).then((list) => list[0]!);

    // The merchant creates the order with its reference.
    const created = await api<{ id: string; checkout_url: string; reference: string }>(h.base, key, 'POST', '/v1/orders', orderBody({ amount: 2500, reference: REFERENCE, line_items: [] }));
    expect(created.status).toBe(201);
    const orderId = created.json.id;

    // The customer pays on the hosted checkout, which shows the reference.
    const context = await browser.newContext({ locale: 'en-US' });
    context.setDefaultTimeout(WAIT_MS);
    try {
      const page = await context.newPage();
      await page.goto(created.json.checkout_url);
      const card = h.sandbox.test_cards.find((c) => c.behaviour === 'approved')!;
      await page.getByLabel('Card number', { exact: true }).pressSequentially(card.number);
      await page.getByLabel('Expiry date (MM/YY)').pressSequentially(`12/${String((new Date().getFullYear() + 2) % 100).padStart(2, '0')}`);
      await page.getByLabel('Security code (CVC)').pressSequentially('123');
      await page.getByLabel('Name on card').pressSequentially('Ada Lovelace');
      await page.getByRole('button', { name: 'Pay €25.00', exact: true }).click();
      await page.getByRole('heading', { level: 1, name: 'Payment successful' }).waitFor();
      expect(await page.locator('body').innerText()).toContain(REFERENCE);
    } finally {
      await context.close();
    }

    const paid = await awaitEvent('order.paid');
    expect(paid.data).toMatchObject({ id: orderId, reference: REFERENCE, amount: 2500, currency: 'EUR' });

    // Evidence first, then a partial refund: order.refunded carries the reference and the reason.
    expect((await api(h.base, key, 'POST', `/v1/orders/${orderId}/evidence`, { customer_email: 'ada@example.com', notes: 'Delivered to the door.' })).status).toBe(200);
    const refund = await api<{ id: string; status: string; reference: string }>(h.base, key, 'POST', `/v1/orders/${orderId}/refunds`, { amount: 500, reason: 'requested_by_customer', note: 'One tin was dented' });
    expect(refund.json).toMatchObject({ status: 'succeeded', reference: REFERENCE });
    const refunded = await awaitEvent('order.refunded');
    expect(refunded.data).toMatchObject({ id: orderId, reference: REFERENCE, amount_refunded: 500, refund: { id: refund.json.id, reason: 'requested_by_customer', note: 'One tin was dented' } });

    // A chargeback of what remains: order.disputed carries the reference and the evidence already attached.
    const opened = await api<{ id: string; amount: number; reference: string }>(h.base, key, 'POST', `/v1/test_helpers/orders/${orderId}/dispute`, { reason: 'product_not_received', amount: 700 });
    expect(opened.status).toBe(201);
    expect(opened.json).toMatchObject({ amount: 700, reference: REFERENCE });
    const disputed = await awaitEvent('order.disputed');
    expect(disputed.data).toMatchObject({ id: orderId, reference: REFERENCE, dispute: { id: opened.json.id, amount: 700 } });
    expect(JSON.stringify(disputed.data)).toContain('Delivered to the door.');
    await awaitEvent('dispute.funds_withdrawn');

    // The payout: one item per movement of the order's money, each with the reference.
    const run = await api<{ payouts: { id: string; amount: number; status: string }[] }>(h.base, key, 'POST', '/v1/test_helpers/payouts/run', {});
    expect(run.status).toBe(200);
    const [payout] = run.json.payouts;
    // 2500 less fees (35 + 25), less the refund (500), less the dispute (700) and its fee (1500): the merchant owes 260.
    // A balance that is not positive makes no payout; a new sale pays it back.
    expect(run.json.payouts).toEqual([]);
    expect(payout).toBeUndefined();
    const second = await api<{ id: string }>(h.base, key, 'POST', '/v1/orders', orderBody({ amount: 10_000, reference: 'ORDER-2026-0043', line_items: [] }));
    await api(h.base, key, 'POST', `/v1/test_helpers/orders/${second.json.id}/simulate_transfer`);
    const next = await api<{ payouts: { id: string; amount: number; status: string; totals: Record<string, number> }[] }>(h.base, key, 'POST', '/v1/test_helpers/payouts/run', {});
    expect(next.json.payouts).toHaveLength(1);
    const batch = next.json.payouts[0]!;
    expect(batch).toMatchObject({ status: 'paid', amount: 2440 - 500 - 700 - 1500 + 9835, totals: { gross: 12_500, refunds: -500, disputes: -700 } });

    const settled = await awaitEvent('payout.settled');
    expect(settled.data).toMatchObject({ id: batch.id });
    expect((settled.data as unknown as { orders: { id: string; reference: string }[] }).orders).toEqual(expect.arrayContaining([{ id: orderId, reference: REFERENCE }]));

    const items = await api<{ data: { type: string; order: string; reference: string; net: number; refund: string | null; dispute: string | null }[] }>(h.base, key, 'GET', `/v1/payouts/${batch.id}/items`);
    const ours = items.json.data.filter((i) => i.order === orderId);
    expect(ours.map((i) => [i.type, i.reference, i.net]).sort()).toEqual(
      [
        ['charge', REFERENCE, 2440],
        ['refund', REFERENCE, -500],
        ['dispute', REFERENCE, -2200],
      ].sort(),
    );
    expect(ours.find((i) => i.type === 'refund')?.refund).toBe(refund.json.id);
    expect(ours.find((i) => i.type === 'dispute')?.dispute).toBe(opened.json.id);

    // The CSV line of the charge, the reference quoted as RFC 4180 says.
    const csv = await fetch(`${h.base}/v1/payouts/${batch.id}/items.csv`, { headers: { authorization: `Bearer ${key}` } });
    expect(csv.status).toBe(200);
    const line = (await csv.text()).split('\r\n').find((l) => l.includes(`,charge,${orderId},`));
    expect(line).toMatch(new RegExp(`^${batch.id},\\d+,charge,${orderId},,,"ORDER-2026-0042,""tea""",EUR,2500,35,25,0,2440,`));
  }, 120_000);
});
