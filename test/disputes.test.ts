// Disputes on the real Postgres: the test helper and the dispute test card open them, evidence is
// attached and submitted, test mode decides them, and the ledger moves the disputed amount and the
// fee. Time is driven through the Clock (never slept); every test ends with the ledger verified
// (test/support/service.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { payWithTestCard } from './support/payments.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
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
  it('refuses to void a disputed order: its money is in the dispute reserve, and a void would undo the capture as well', async () => {
    const orderId = await paidOrder({ reference: 'disputed-then-voided' });
    expect((await dispute(orderId, { reason: 'fraudulent', amount: 1000 })).statusCode).toBe(201);
    const voided = await post(`/v1/orders/${orderId}/void`, undefined);
    expect(voided.statusCode).toBe(409);
    expect(voided.json().error).toMatchObject({ code: 'order_not_voidable', message: expect.stringMatching(/disputed/) });
    expect((await get(`/v1/orders/${orderId}`)).json().status).toBe('paid');
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

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

  it('takes the money from the available balance once the order is settled', async () => {
    const id = await paidOrder({ reference: 'settled-dispute' });
    expect((await post('/v1/test_helpers/payouts/run', undefined)).json().settled_orders).toBeGreaterThan(0);
    const before = await balance();
    const res = await dispute(id, { reason: 'product_not_received' });
    expect(res.json()).toMatchObject({ amount: 2500, status: 'needs_response' });
    expect(await entriesOf(`ltx_dispute_withdrawal_${res.json().id}`)).toEqual([
      ['merchant_available', 'EUR', 2500, 'dispute'],
      ['dispute_reserve', 'EUR', -2500, 'dispute'],
      ['merchant_available', 'EUR', 1500, 'dispute_fee'],
      ['fees_earned', 'EUR', -1500, 'dispute_fee'],
    ]);
    const after = await balance();
    expect(amountIn(after.available)).toBe(amountIn(before.available) - 4000);
    expect(amountIn(after.pending)).toBe(amountIn(before.pending));
  });

  it('wins a dispute submitted with winning_evidence: under_review, then won with its money back (not the fee)', async () => {
    const id = await paidOrder({ reference: 'won-dispute' });
    const opened = (await dispute(id, { reason: 'product_not_received' })).json();
    const submitted = await post(`/v1/disputes/${opened.id}/submit`, { evidence: { notes: 'Delivered and signed for: winning_evidence', delivered_at: '2030-01-02T03:04:05Z' } });
    expect(submitted.statusCode, submitted.body).toBe(200);
    expect(submitted.json()).toMatchObject({ status: 'under_review', submission_count: 1, evidence: { notes: 'Delivered and signed for: winning_evidence', delivered_at: '2030-01-02T03:04:05.000Z' } });
    // Merged into the order's evidence too.
    expect((await post(`/v1/orders/${id}/evidence`, {})).json()).toMatchObject({ notes: 'Delivered and signed for: winning_evidence' });
    await svc.core.disputes.sweep();
    const won = (await get(`/v1/disputes/${opened.id}`)).json();
    expect(won).toMatchObject({ status: 'won', closed: expect.any(String) });
    expect((await eventsOf(opened.id)).map((e) => [e.type, e.sequence])).toEqual([
      ['order.disputed', 1],
      ['dispute.funds_withdrawn', 2],
      ['dispute.updated', 3],
      ['dispute.funds_reinstated', 4],
      ['dispute.closed', 5],
    ]);
    const closed = (await eventsOf(opened.id))[4];
    expect(closed.data).toMatchObject({ order_id: id, reference: 'won-dispute', outcome: 'won', dispute: { id: opened.id, status: 'won' } });
    expect(await entriesOf(`ltx_dispute_reinstatement_${opened.id}`)).toEqual([
      ['dispute_reserve', 'EUR', 2500, 'dispute_reversal'],
      ['merchant_pending', 'EUR', -2500, 'dispute_reversal'],
    ]);
    // A second sweep changes nothing.
    await svc.core.disputes.sweep();
    expect(await eventsOf(opened.id)).toHaveLength(5);
    const again = await post(`/v1/disputes/${opened.id}/submit`, {});
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'dispute_not_submittable' });
    // Won: the money may be refunded again.
    expect((await post(`/v1/orders/${id}/refunds`, { reason: 'other' })).json()).toMatchObject({ amount: 2500, status: 'succeeded' });
  });

  it('loses a dispute submitted with losing_evidence: the network keeps the money', async () => {
    const id = await paidOrder({ reference: 'lost-dispute' });
    const opened = (await dispute(id, { reason: 'duplicate', amount: 2000 })).json();
    expect((await post(`/v1/disputes/${opened.id}/submit`, { evidence: { notes: 'losing_evidence' } })).json()).toMatchObject({ status: 'under_review' });
    await svc.core.disputes.sweep();
    expect((await get(`/v1/disputes/${opened.id}`)).json()).toMatchObject({ status: 'lost' });
    expect((await eventsOf(opened.id)).map((e) => e.type)).toEqual(['order.disputed', 'dispute.funds_withdrawn', 'dispute.updated', 'dispute.closed']);
    expect(await entriesOf(`ltx_dispute_loss_${opened.id}`)).toEqual([
      ['dispute_reserve', 'EUR', 2000, 'dispute'],
      ['acquirer_clearing', 'EUR', -2000, 'dispute'],
    ]);
    // Lost: the 20.00 stays taken, so only 5.00 can be refunded.
    const refund = await post(`/v1/orders/${id}/refunds`, { amount: 501, reason: 'other' });
    expect(refund.json().error).toMatchObject({ code: 'refund_exceeds_remaining' });
  });

  it('loses a dispute left unanswered past evidence_due_by, and refuses a late submission', async () => {
    const id = await paidOrder({ reference: 'overdue-dispute' });
    const dueBy = new Date(Date.now() + offsetMs + 60_000).toISOString();
    const opened = (await dispute(id, { reason: 'general', evidence_due_by: dueBy })).json();
    expect(opened.evidence_due_by).toBe(dueBy);
    await svc.core.disputes.sweep();
    expect((await get(`/v1/disputes/${opened.id}`)).json()).toMatchObject({ status: 'needs_response' });
    advance(61_000);
    const late = await post(`/v1/disputes/${opened.id}/submit`, { evidence: { notes: 'winning_evidence' } });
    expect(late.statusCode).toBe(409);
    expect(late.json().error).toMatchObject({ code: 'dispute_evidence_past_due' });
    await svc.core.disputes.sweep();
    expect((await get(`/v1/disputes/${opened.id}`)).json()).toMatchObject({ status: 'lost' });
    expect(await entriesOf(`ltx_dispute_loss_${opened.id}`)).toHaveLength(2);
    // One in the past at once is lost at the next sweep.
    const id2 = await paidOrder({ reference: 'past-due-dispute' });
    const past = (await dispute(id2, { reason: 'general', evidence_due_by: '2020-01-01T00:00:00Z' })).json();
    await svc.core.disputes.sweep();
    expect((await get(`/v1/disputes/${past.id}`)).json()).toMatchObject({ status: 'lost' });
  });

  it('disputes a payment of the dispute test card a few seconds after its capture (the sweeper, on the clock)', async () => {
    const id = await paidOrder({ reference: 'dispute-card' }, 'dispute');
    expect((await get(`/v1/orders/${id}`)).json()).toMatchObject({ status: 'paid', disputes: [] });
    await svc.core.disputes.sweep();
    expect((await get(`/v1/disputes?order=${id}`)).json().data).toEqual([]);
    advance(6_000);
    const swept = await Promise.all([svc.core.disputes.sweep(), svc.core.disputes.sweep()]);
    expect(swept[0].opened + swept[1].opened).toBe(1);
    const list = (await get(`/v1/disputes?order=${id}`)).json();
    expect(list.data).toHaveLength(1);
    expect(list.data[0]).toMatchObject({ order: id, reference: 'dispute-card', amount: 2500, reason: 'fraudulent', status: 'needs_response' });
    expect((await svc.core.disputes.sweep()).opened).toBe(0);
    // The approved card is not disputed.
    const plain = await paidOrder({ reference: 'approved-card' });
    advance(6_000);
    await svc.core.disputes.sweep();
    expect((await get(`/v1/disputes?order=${plain}`)).json().data).toEqual([]);
  });

  it('cannot dispute more than was captured less refunds; the default is what remains', async () => {
    const id = await paidOrder({ reference: 'refund-then-dispute' });
    expect((await post(`/v1/orders/${id}/refunds`, { amount: 1000, reason: 'other' })).json()).toMatchObject({ status: 'succeeded' });
    const over = await dispute(id, { reason: 'fraudulent', amount: 1501 });
    expect(over.statusCode).toBe(400);
    expect(over.json().error).toMatchObject({ code: 'dispute_exceeds_remaining', param: 'amount' });
    expect((await dispute(id, { reason: 'fraudulent' })).json()).toMatchObject({ amount: 1500 });
    const none = await dispute(id, { reason: 'fraudulent' });
    expect(none.json().error).toMatchObject({ code: 'dispute_exceeds_remaining' });
  });

  it("refuses a refund of money an open dispute holds", async () => {
    const id = await paidOrder({ reference: 'dispute-then-refund' });
    expect((await dispute(id, { reason: 'fraudulent', amount: 2000 })).statusCode).toBe(201);
    const refused = await post(`/v1/orders/${id}/refunds`, { amount: 501, reason: 'other' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code: 'refund_exceeds_remaining' });
    expect(refused.json().error.message).toContain('held by disputes');
    expect((await post(`/v1/orders/${id}/refunds`, { reason: 'other' })).json()).toMatchObject({ amount: 500, status: 'succeeded' });
  });

  it('does not over-withdraw: 20 concurrent disputes of 30% each open exactly three', async () => {
    const id = await paidOrder({ reference: 'dispute-race', amount: 10_000 });
    const answers = await Promise.all(Array.from({ length: 20 }, () => dispute(id, { reason: 'duplicate', amount: 3000 })));
    expect(answers.filter((a) => a.statusCode === 201)).toHaveLength(3);
    for (const a of answers.filter((x) => x.statusCode !== 201)) expect(['dispute_exceeds_remaining', 'concurrent_change']).toContain(a.json().error.code);
    expect((await svc.db.knex('orders').where({ id }).first()).amount_disputed).toBe('9000');
    // The database refuses it too, whatever the code did.
    await expect(svc.db.knex('orders').where({ id }).update({ amount_disputed: 10_001 })).rejects.toThrow(/orders_refunds_within_amount/);
    expect(await svc.core.ledger.verify()).toBeUndefined();
    expect(svc.internalErrors).toEqual([]);
  });

  it("answers another merchant's dispute and order as unknown (404), and refuses the helper with a live key", async () => {
    const id = await paidOrder({ reference: 'not-your-dispute' });
    const opened = (await dispute(id, { reason: 'fraudulent', amount: 100 })).json();
    const other = await svc.sandbox('Other dispute shop');
    expect((await get(`/v1/disputes/${opened.id}`, other.test_secret_key)).statusCode).toBe(404);
    expect((await get(`/v1/disputes/${opened.id}`, shop.live_secret_key)).statusCode).toBe(404);
    const submit = await post(`/v1/disputes/${opened.id}/submit`, {}, {}, other.test_secret_key);
    expect(submit.statusCode).toBe(404);
    expect(submit.json().error).toMatchObject({ code: 'resource_missing' });
    expect((await post(`/v1/orders/${id}/evidence`, { notes: 'x' }, {}, other.test_secret_key)).statusCode).toBe(404);
    expect((await dispute(id, { reason: 'fraudulent' }, {}, other.test_secret_key)).statusCode).toBe(404);
    expect((await get(`/v1/disputes/dp_unknown`)).statusCode).toBe(404);
    expect((await get(`/v1/disputes?order=${id}`, other.test_secret_key)).json().data).toEqual([]);
    const live = await dispute(id, { reason: 'fraudulent' }, {}, shop.live_secret_key);
    expect(live.statusCode).toBe(400);
    expect(live.json().error).toMatchObject({ code: 'test_mode_only' });
    expect((await get(`/v1/disputes/${opened.id}`)).json()).toMatchObject({ status: 'needs_response', submission_count: 0 });
  });

  it('answers a repeated Idempotency-Key of the helper with the first dispute', async () => {
    const id = await paidOrder({ reference: 'idempotent-dispute' });
    const first = await dispute(id, { reason: 'fraudulent', amount: 700 }, { 'idempotency-key': 'dispute-once' });
    const again = await dispute(id, { reason: 'fraudulent', amount: 700 }, { 'idempotency-key': 'dispute-once' });
    expect(first.statusCode).toBe(201);
    expect(again.statusCode).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.json()).toEqual(first.json());
    expect((await dispute(id, { reason: 'fraudulent', amount: 800 }, { 'idempotency-key': 'dispute-once' })).json().error.code).toBe('idempotency_key_reused');
    expect(await svc.db.knex('disputes').where({ order_id: id })).toHaveLength(1);
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    ['notes over 5,000 characters', { notes: 'x'.repeat(5001) }, 'evidence_invalid', 'notes'],
    ['a customer_email that is not one', { customer_email: 'ada' }, 'evidence_invalid', 'customer_email'],
    ['an unknown field', { signature: 'x' }, 'parameter_unknown', 'signature'],
    ['a delivered_at that is no time', { delivered_at: 'yesterday' }, 'parameter_invalid_timestamp', 'delivered_at'],
  ])('refuses evidence with %s', async (_label, body, code, param) => {
    const id = await paidOrder({ reference: `evidence-${param}` });
    const res = await post(`/v1/orders/${id}/evidence`, body);
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toMatchObject({ code, param });
  });

  it('merges evidence: a field given replaces, "" clears, an absent one is kept', async () => {
    const id = await paidOrder({ reference: 'evidence-merge' });
    await post(`/v1/orders/${id}/evidence`, { customer_name: 'Ada', tracking_number: 'T1' });
    const merged = (await post(`/v1/orders/${id}/evidence`, { tracking_number: 'T2', customer_name: '' })).json();
    expect(merged).toMatchObject({ customer_name: null, tracking_number: 'T2', updated: expect.any(String) });
  });

  it('refuses to dispute an order that was never paid (409)', async () => {
    const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: headers(), payload: orderBody() });
    const res = await dispute(created.json().id, { reason: 'fraudulent' });
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toMatchObject({ code: 'order_not_disputable' });
    const bad = await dispute(await paidOrder({ reference: 'bad-reason' }), { reason: 'changed_mind' });
    expect(bad.json().error).toMatchObject({ code: 'reason_invalid', param: 'reason' });
  });
});
