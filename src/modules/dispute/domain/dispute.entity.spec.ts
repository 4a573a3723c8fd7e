import { describe, expect, it } from 'vitest';
import type { Order } from '../../order/domain/order.entity.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { closeDispute, disputeFee, isPastDue, openDispute, planDispute, submitDispute, testOutcome, type Dispute, type DisputeCommand, type OrderHolds } from './dispute.entity.ts';
import { mergeEvidence, NO_MERCHANT_EVIDENCE, type Evidence } from './evidence.ts';

const NOW = new Date('2026-03-01T12:00:00Z');

function anOrder(overrides: Partial<Order> = {}): Order {
  return {
    id: 'ord_abc', merchantId: 'mer_1', livemode: false, reference: 'INV-42', amount: 2_500n, currency: 'EUR', status: 'paid',
    lineItems: [], returnUrl: null, checkoutUrl: 'https://pay.example/c/abc', method: 'card', settlement: { currency: 'EUR', amount: 2_440n },
    amountRefunded: 0n, settledAt: null, createdAt: NOW, expiresAt: NOW, checkoutToken: 'tok', version: 2,
    captureMethod: 'automatic', amountCaptured: null, authorizationExpiresAt: null, ...overrides,
  };
}

const holds = (overrides: Partial<OrderHolds> = {}): OrderHolds => ({ paymentId: 'pay_1', refundPending: 0n, disputed: 0n, ...overrides });
const command = (overrides: Partial<DisputeCommand> = {}): DisputeCommand => ({ reason: 'fraudulent', amount: undefined, evidenceDueBy: undefined, ...overrides });
const facts = { id: 'dp_1', now: NOW, settlementCurrency: 'EUR', withdrawn: (m: { amount: bigint; currency: string }) => m, source: 'test_helper' as const };
const plan = (order = anOrder(), h = holds(), c = command()) => planDispute(order, h, c, facts);
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof DomainError ? err.code : String(err);
  }
};
let n = 0;
const eventIds = () => ({ eventId: `evt_${++n}`, now: NOW });
const evidence = (notes: string | null = null): Evidence => ({
  orderId: 'ord_abc',
  merchant: { ...NO_MERCHANT_EVIDENCE, notes },
  service: { authentication: 'passed', paidAt: NOW, customerIp: '203.0.113.7', receiptUrl: 'https://pay.example/c/abc', cardBrand: 'visa', cardLast4: '4242' },
  updatedAt: null,
});

describe('opening a dispute', () => {
  it('takes what remains when no amount is given, less refunds, pending refunds and other disputes', () => {
    expect(plan().amount).toBe(2_500n);
    expect(plan(anOrder({ amountRefunded: 500n, status: 'partially_refunded' }), holds({ refundPending: 300n, disputed: 700n })).amount).toBe(1_000n);
  });

  it('needs a response, due in 7 days unless told otherwise, with the fee in the settlement currency', () => {
    const d = plan();
    expect(d).toMatchObject({ status: 'needs_response', submissionCount: 0, withdrawnFrom: 'merchant_pending', fee: { currency: 'EUR', amount: 1_500n }, version: 0 });
    expect(d.evidenceDueBy.getTime() - NOW.getTime()).toBe(7 * 24 * 3600 * 1000);
    const past = new Date('2020-01-01T00:00:00Z');
    expect(plan(anOrder(), holds(), command({ evidenceDueBy: past })).evidenceDueBy).toEqual(past);
    expect(plan(anOrder({ settledAt: NOW })).withdrawnFrom).toBe('merchant_available');
  });

  it.each<[string, () => unknown, string]>([
    ['an unpaid order', () => plan(anOrder({ status: 'pending' })), 'dispute.order_not_disputable'],
    ['a voided order', () => plan(anOrder({ status: 'voided' })), 'dispute.order_not_disputable'],
    ['an order with no captured payment', () => plan(anOrder(), holds({ paymentId: undefined })), 'dispute.order_not_disputable'],
    ['a bank transfer', () => plan(anOrder({ method: 'bank_transfer' })), 'dispute.order_not_disputable'],
    ['an unknown reason', () => plan(anOrder(), holds(), command({ reason: 'changed_mind' })), 'dispute.reason_invalid'],
    ['a zero amount', () => plan(anOrder(), holds(), command({ amount: 0n })), 'dispute.amount_invalid'],
    ['more than remains', () => plan(anOrder({ amountRefunded: 1_000n }), holds(), command({ amount: 1_501n })), 'dispute.exceeds_remaining'],
    ['nothing left', () => plan(anOrder(), holds({ disputed: 2_500n })), 'dispute.exceeds_remaining'],
  ])('refuses %s', (_label, fn, code) => {
    expect(codeOf(fn)).toBe(code);
  });

  it('tells of itself in two events numbered 1 and 2: order.disputed with the evidence, then dispute.funds_withdrawn', () => {
    const change = openDispute(plan(), anOrder(), evidence('hello'), eventIds);
    expect(change.dispute.version).toBe(2);
    expect(change.events.map((e) => [e.type, e.sequence, e.subject.type, e.orderId, e.reference])).toEqual([
      ['order.disputed', 1, 'dispute', 'ord_abc', 'INV-42'],
      ['dispute.funds_withdrawn', 2, 'dispute', 'ord_abc', 'INV-42'],
    ]);
    expect(change.events[0]!.data).toMatchObject({ id: 'ord_abc', dispute: { id: 'dp_1', amount: 2500, status: 'needs_response' }, evidence: { merchant: { notes: 'hello' }, service: { authentication: 'passed' } } });
    expect(change.events[1]!.data).toMatchObject({ funds: { amount: 2500, currency: 'EUR', fee: 1500, fee_currency: 'EUR' } });
  });

  it('charges 15 major units of the settlement currency, whatever its exponent', () => {
    expect(disputeFee('EUR')).toEqual({ currency: 'EUR', amount: 1_500n });
    expect(disputeFee('JPY')).toEqual({ currency: 'JPY', amount: 15n });
    expect(disputeFee('KWD')).toEqual({ currency: 'KWD', amount: 15_000n });
  });
});

describe("a dispute's life", () => {
  const opened = (): Dispute => openDispute(plan(), anOrder(), evidence(), eventIds).dispute;

  it('needs_response → under_review on submission, then won with its money back', () => {
    const submitted = submitDispute(opened(), evidence('winning_evidence'), NOW, eventIds);
    expect(submitted.dispute).toMatchObject({ status: 'under_review', submissionCount: 1, version: 3 });
    expect(submitted.events.map((e) => [e.type, e.sequence])).toEqual([['dispute.updated', 3]]);
    expect(testOutcome(submitted.dispute)).toBe('won');
    const won = closeDispute(submitted.dispute, 'won', NOW, eventIds);
    expect(won.dispute).toMatchObject({ status: 'won', closedAt: NOW, version: 5 });
    expect(won.events.map((e) => [e.type, e.sequence])).toEqual([
      ['dispute.funds_reinstated', 4],
      ['dispute.closed', 5],
    ]);
    expect(won.events[1]!.data).toMatchObject({ outcome: 'won' });
  });

  it('loses with losing_evidence, with one event, and stays under review with neither', () => {
    const losing = submitDispute(opened(), evidence('losing_evidence'), NOW, eventIds).dispute;
    expect(testOutcome(losing)).toBe('lost');
    expect(closeDispute(losing, 'lost', NOW, eventIds).events.map((e) => e.type)).toEqual(['dispute.closed']);
    expect(testOutcome(submitDispute(opened(), evidence('a receipt'), NOW, eventIds).dispute)).toBeUndefined();
    expect(testOutcome(opened())).toBeUndefined();
  });

  it('is past due only while it needs a response, after evidence_due_by', () => {
    const d = opened();
    const after = new Date(d.evidenceDueBy.getTime() + 1);
    expect(isPastDue(d, d.evidenceDueBy)).toBe(false);
    expect(isPastDue(d, after)).toBe(true);
    expect(isPastDue(submitDispute(d, evidence(), NOW, eventIds).dispute, after)).toBe(false);
  });

  it('refuses a submission once submitted or closed, or past due; a closed dispute cannot close again', () => {
    const d = opened();
    const submitted = submitDispute(d, evidence(), NOW, eventIds).dispute;
    expect(codeOf(() => submitDispute(submitted, evidence(), NOW, eventIds))).toBe('dispute.not_submittable');
    expect(codeOf(() => submitDispute(d, evidence(), new Date(d.evidenceDueBy.getTime() + 1), eventIds))).toBe('dispute.evidence_past_due');
    const lost = closeDispute(d, 'lost', NOW, eventIds).dispute;
    expect(codeOf(() => submitDispute(lost, evidence(), NOW, eventIds))).toBe('dispute.not_submittable');
    expect(() => closeDispute(lost, 'won', NOW, eventIds)).toThrow(/lost already/);
  });
});

describe('evidence', () => {
  it('merges: a field given replaces (trimmed), "" clears, an absent one is kept', () => {
    const first = mergeEvidence(NO_MERCHANT_EVIDENCE, { customer_name: ' Ada ', tracking_number: 'T1' });
    expect(first).toMatchObject({ customer_name: 'Ada', tracking_number: 'T1' });
    expect(mergeEvidence(first, { tracking_number: '', notes: 'n' })).toMatchObject({ customer_name: 'Ada', tracking_number: null, notes: 'n' });
  });

  it('refuses text past its limit, an email that is not one, and NUL characters', () => {
    expect(codeOf(() => mergeEvidence(NO_MERCHANT_EVIDENCE, { shipping_carrier: 'x'.repeat(101) }))).toBe('evidence.field_invalid');
    expect(codeOf(() => mergeEvidence(NO_MERCHANT_EVIDENCE, { customer_email: 'nobody' }))).toBe('evidence.field_invalid');
    expect(codeOf(() => mergeEvidence(NO_MERCHANT_EVIDENCE, { notes: 'a\u0000b' }))).toBe('evidence.field_invalid');
    expect(codeOf(() => mergeEvidence(NO_MERCHANT_EVIDENCE, { notes: 'x'.repeat(5000), customer_email: 'a@b.c' }))).toBe('ok');
  });
});
