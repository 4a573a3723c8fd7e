import { describe, expect, it } from 'vitest';
import type { Order } from '../../order/domain/order.entity.ts';
import { noteRefund } from '../../order/domain/order-transitions.ts';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { planRefund, type RefundCommand } from './refund.entity.ts';

const NOW = new Date('2026-03-01T12:00:00Z');

function anOrder(overrides: Partial<Order> = {}): Order {
  return {
    id: 'ord_abc', merchantId: 'mer_1', livemode: false, reference: 'INV-42', amount: 2_500n, currency: 'EUR', status: 'paid',
    lineItems: [], returnUrl: null, checkoutUrl: 'https://pay.example/c/abc', method: 'card', settlement: { currency: 'EUR', amount: 2_440n },
    captureMethod: 'automatic', amountCaptured: null, authorizationExpiresAt: null,
    amountRefunded: 0n, settledAt: null, createdAt: NOW, expiresAt: NOW, checkoutToken: 'tok', version: 2, ...overrides,
  };
}

const command = (overrides: Partial<RefundCommand> = {}): RefundCommand => ({ amount: undefined, reason: 'other', note: '', ...overrides });
/** paymentId null: the order has no captured payment (one is being voided). */
const plan = (order: Order, cmd: RefundCommand, inFlight = 0n, paymentId: string | null = 'pay_1') => planRefund(order, paymentId ?? undefined, inFlight, cmd, { id: 're_1', now: NOW });
const codeOf = (fn: () => unknown) => {
  try {
    fn();
    return 'planned';
  } catch (err) {
    return err instanceof DomainError ? err.code : String(err);
  }
};

describe('deciding a refund', () => {
  it('takes what remains when no amount is given, counting what pending refunds hold', () => {
    expect(plan(anOrder(), command()).amount).toBe(2_500n);
    expect(plan(anOrder({ status: 'partially_refunded', amountRefunded: 1_000n }), command(), 500n).amount).toBe(1_000n);
    expect(plan(anOrder(), command({ amount: 1n }))).toMatchObject({ amount: 1n, status: 'pending', paymentId: 'pay_1', reference: 'INV-42', currency: 'EUR' });
  });

  it.each<[string, Partial<Order>, Partial<RefundCommand>, bigint, string | null, string]>([
    ['an unpaid order', { status: 'pending' }, {}, 0n, 'pay_1', 'refund.order_not_refundable'],
    ['a voided order', { status: 'voided' }, {}, 0n, 'pay_1', 'refund.order_not_refundable'],
    ['a payment being voided (no captured payment)', {}, {}, 0n, null, 'refund.order_not_refundable'],
    ['more than remains', {}, { amount: 2_501n }, 0n, 'pay_1', 'refund.exceeds_remaining'],
    ['what pending refunds already hold', {}, { amount: 2_000n }, 600n, 'pay_1', 'refund.exceeds_remaining'],
    ['anything of a refunded order', { status: 'refunded', amountRefunded: 2_500n }, {}, 0n, 'pay_1', 'refund.exceeds_remaining'],
    ['a zero amount', {}, { amount: 0n }, 0n, 'pay_1', 'refund.amount_invalid'],
    ['a negative amount', {}, { amount: -5n }, 0n, 'pay_1', 'refund.amount_invalid'],
    ['an unknown reason', {}, { reason: 'changed_mind' }, 0n, 'pay_1', 'refund.reason_invalid'],
    ['a note of 501 characters', {}, { note: 'é'.repeat(501) }, 0n, 'pay_1', 'refund.note_invalid'],
    ['a note with NUL', {}, { note: 'a\u0000b' }, 0n, 'pay_1', 'refund.note_invalid'],
  ])('refuses %s', (_label, order, cmd, inFlight, paymentId, code) => {
    expect(codeOf(() => plan(anOrder(order), command(cmd), inFlight, paymentId))).toBe(code);
  });

  it('accepts a note of exactly 500 characters, counted as characters, not UTF-16 units', () => {
    expect(plan(anOrder(), command({ note: '🧾'.repeat(500) })).note).toHaveLength(1000);
  });

  it('moves the order to partially_refunded, then refunded, with order.refunded telling the running total', () => {
    const first = noteRefund(anOrder(), { id: 're_1', amount: 1_000n, currency: 'EUR', reason: 'other', note: '' }, { eventId: 'evt_1', now: NOW });
    expect(first.order).toMatchObject({ status: 'partially_refunded', amountRefunded: 1_000n, version: 3 });
    expect(first.event.data).toMatchObject({ amount_refunded: 1_000, refund: { id: 're_1', amount: 1_000, note: null } });
    const rest = noteRefund(first.order, { id: 're_2', amount: 1_500n, currency: 'EUR', reason: 'duplicate', note: 'dup' }, { eventId: 'evt_2', now: NOW });
    expect(rest.order).toMatchObject({ status: 'refunded', amountRefunded: 2_500n, version: 4 });
    expect(() => noteRefund(rest.order, { id: 're_3', amount: 1n, currency: 'EUR', reason: 'other', note: '' }, { eventId: 'evt_3', now: NOW })).toThrow();
  });
});
