// Disputes on the real Postgres: the test helper and the dispute test card open them, evidence is
// attached and submitted, test mode decides them, and the ledger moves the disputed amount and the
// fee. Time is driven through the Clock (never slept); every test ends with the ledger verified
// (test/support/service.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { payWithTestCard } from './support/payments.ts';
import type { SandboxCredentials } from '../src/application/merchant/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

let svc: TestService;
let shop: SandboxCredentials;
/** How far the service's clock is ahead of the real one. */
let offsetMs = 0;
const advance = (ms: number) => {
  offsetMs += ms;
};

beforeAll(async () => {
  svc = await startTestService({ clock: { now: () => new Date(Date.now() + offsetMs) } });
  shop = await svc.sandbox('Dispute shop');
});
afterAll(async () => {
  await svc?.close();
});

const headers = (extra: Record<string, string> = {}, key = shop.test_secret_key) => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json', ...extra });

async function paidOrder(overrides: Record<string, unknown> = {}, behaviour = 'approved'): Promise<string> {
  const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody({ amount: 2500, line_items: [], ...overrides }) });
  expect(created.statusCode, created.body).toBe(201);
  const orderId = created.json().id as string;
  const { outcome } = await payWithTestCard(svc.core.routes, shop, orderId, { behaviour });
  expect(outcome?.status).toBe(PaymentStatus.SUCCEEDED);
  return orderId;
}

const post = (url: string, body: Record<string, unknown> | undefined, extra: Record<string, string> = {}, key?: string) =>
  svc.app.inject({ method: 'POST', url, headers: headers(extra, key), ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
const dispute = (orderId: string, body: Record<string, unknown>, extra: Record<string, string> = {}, key?: string) => post(`/v1/test_helpers/orders/${orderId}/dispute`, body, extra, key);
const get = async (url: string, key?: string) => svc.app.inject({ method: 'GET', url, headers: headers({}, key) });

async function entriesOf(transactionId: string) {
  const rows = await svc.db.knex('ledger_entries').where({ transaction_id: transactionId }).orderBy('id');
  return rows.map((e) => [e.account, e.currency.trim(), Number(e.amount), e.purpose]);
}
async function eventsOf(disputeId: string) {
  return svc.db.knex('events').where({ subject_type: 'dispute', subject_id: disputeId }).orderBy('sequence');
}
async function balance() {
  return (await get('/v1/balance')).json() as { pending: { currency: string; amount: number }[]; available: { currency: string; amount: number }[] };
}
const amountIn = (list: { currency: string; amount: number }[], currency = 'EUR') => list.find((b) => b.currency === currency)?.amount ?? 0;

describe('disputes', () => {
  it('opens a dispute with the helper: order.disputed carries the evidence attached before, the ledger withdraws the amount and the fee', async () => {
    const id = await paidOrder({ reference: 'disputed-1' });
    const attached = await post(`/v1/orders/${id}/evidence`, { customer_email: 'ada@example.com', tracking_number: '1Z999', shipping_carrier: 'UPS' });
    expect(attached.statusCode, attached.body).toBe(200);
    expect(attached.json()).toMatchObject({ object: 'evidence', order: id, customer_email: 'ada@example.com', tracking_number: '1Z999', service: { authentication: 'not_required', card_brand: 'visa', receipt_url: expect.stringContaining('/c/') } });
    const before = await balance();
    const res = await dispute(id, { reason: 'fraudulent', amount: 1000 });
    expect(res.statusCode, res.body).toBe(201);
    const body = res.json();
    expect(body).toMatchObject({ object: 'dispute', order: id, reference: 'disputed-1', amount: 1000, currency: 'EUR', reason: 'fraudulent', status: 'needs_response', fee: 1500, fee_currency: 'EUR', submission_count: 0 });
    expect(body.id).toMatch(/^dp_/);
    const events = await eventsOf(body.id);
    expect(events.map((e) => [e.type, e.sequence, e.order_id, e.reference])).toEqual([
      ['order.disputed', 1, id, 'disputed-1'],
      ['dispute.funds_withdrawn', 2, id, 'disputed-1'],
    ]);
    expect(events[0].data).toMatchObject({
      id,
      reference: 'disputed-1',
      dispute: { id: body.id, amount: 1000, currency: 'EUR', reason: 'fraudulent', status: 'needs_response', evidence_due_by: body.evidence_due_by },
      evidence: { merchant: { customer_email: 'ada@example.com', tracking_number: '1Z999', shipping_carrier: 'UPS' }, service: { authentication: 'not_required', card_brand: 'visa' } },
    });
    expect(events[1].data).toMatchObject({ order_id: id, reference: 'disputed-1', funds: { amount: 1000, currency: 'EUR', fee: 1500, fee_currency: 'EUR' } });
    expect(await entriesOf(`ltx_dispute_withdrawal_${body.id}`)).toEqual([
      ['merchant_pending', 'EUR', 1000, 'dispute'],
      ['dispute_reserve', 'EUR', -1000, 'dispute'],
      ['merchant_pending', 'EUR', 1500, 'dispute_fee'],
      ['fees_earned', 'EUR', -1500, 'dispute_fee'],
    ]);
    expect(amountIn((await balance()).pending)).toBe(amountIn(before.pending) - 2500);
    const order = (await get(`/v1/orders/${id}`)).json();
    expect(order).toMatchObject({ status: 'paid', disputes: [{ id: body.id, status: 'needs_response' }] });
    expect((await get(`/v1/disputes/${body.id}`)).json()).toMatchObject({ id: body.id, evidence: { tracking_number: '1Z999' } });
    expect((await get(`/v1/disputes?order=${id}`)).json()).toMatchObject({ object: 'list', has_more: false, data: [{ id: body.id }] });
  });
});
