import { describe, expect, it } from 'vitest';
import { DECLINES } from '../../payment/domain/decline-code.ts';
import { DomainError, type DomainErrorCode } from '../../../kernel/domain/domain-error.ts';
import type { Order, OrderStatus } from './order.entity.ts';
import { assertPayable, isDueToExpire, markExpired, markFailed, markPaid, noteReversal } from './order-transitions.ts';

const CREATED = new Date('2026-03-01T10:00:00Z');
const EXPIRES = new Date('2026-03-02T10:00:00Z');
const BEFORE_EXPIRY = new Date('2026-03-01T12:00:00Z');
const ids = { eventId: 'evt_1', now: BEFORE_EXPIRY };

/** Builds an order fixture; overrides name only what a test is about. */
function anOrder(overrides: Partial<Order> = {}): Order {
  return {
    id: 'ord_abc',
    merchantId: 'mer_1',
    livemode: false,
    reference: 'INV-42',
    amount: 2_500n,
    currency: 'EUR',
    status: 'pending',
    lineItems: [{ name: 'Tea', amount: 2_500n }],
    returnUrl: 'https://shop.example/back',
    checkoutUrl: 'https://pay.example/c/abc',
    method: null,
    settlement: null,
    captureMethod: 'automatic',
    amountCaptured: null,
    authorizationExpiresAt: null,
    amountRefunded: 0n,
    settledAt: null,
    createdAt: CREATED,
    expiresAt: EXPIRES,
    checkoutToken: 'tok',
    version: 1,
    ...overrides,
  };
}

const paid = { method: 'card' as const, settlement: { currency: 'EUR', amount: 2_440n } };
const failure = { declineCode: 'insufficient_funds' as const, route: 'primary', retried: true, attemptId: 'att_9', method: 'card' as const };

function codeOf(order: Order, now: Date): DomainErrorCode | 'payable' {
  try {
    assertPayable(order, now);
    return 'payable';
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    return err.code;
  }
}

describe('markPaid', () => {
  it.each<[OrderStatus, number]>([
    ['pending', 1],
    ['failed', 3],
  ])('from %s at version %i: bumps the version and records method and settlement', (status, version) => {
    const before = anOrder({ status, version });
    const { order, event } = markPaid(before, paid, ids);
    expect(order).toEqual({ ...before, status: 'paid', version: version + 1, method: 'card', settlement: paid.settlement, amountCaptured: 2_500n });
    expect(event).toEqual({
      id: 'evt_1',
      type: 'order.paid',
      merchantId: 'mer_1',
      livemode: false,
      subject: { type: 'order', id: 'ord_abc' },
      orderId: 'ord_abc',
      reference: 'INV-42',
      sequence: version + 1,
      createdAt: BEFORE_EXPIRY,
      data: { id: 'ord_abc', reference: 'INV-42', amount: 2500, currency: 'EUR', method: 'card', settlement: { currency: 'EUR', amount: 2440 } },
    });
  });

  it('carries exactly the spec fields, with amounts as JSON numbers', () => {
    const { event } = markPaid(anOrder(), { method: 'bank_transfer', settlement: { currency: 'USD', amount: 2_600n } }, ids);
    expect(Object.keys(event.data).sort()).toEqual(['amount', 'currency', 'id', 'method', 'reference', 'settlement']);
    const settlement = event.data['settlement'] as { [key: string]: unknown };
    expect(Object.keys(settlement).sort()).toEqual(['amount', 'currency']);
    expect(typeof event.data['amount']).toBe('number');
    expect(typeof settlement['amount']).toBe('number');
    expect(settlement).toEqual({ currency: 'USD', amount: 2600 });
    // The event must survive JSON: no bigint anywhere in it.
    expect(JSON.parse(JSON.stringify(event.data))).toEqual(event.data);
  });

  it('does not mutate the order it was given', () => {
    const before = anOrder();
    const snapshot = structuredClone(before);
    markPaid(before, paid, ids);
    expect(before).toEqual(snapshot);
  });
});

describe('markFailed', () => {
  it.each<[OrderStatus, number]>([
    ['pending', 1],
    ['failed', 2],
  ])('from %s emits order.failed with an actionable reason', (status, version) => {
    const before = anOrder({ status, version });
    const { order, event } = markFailed(before, failure, { eventId: 'evt_2', now: BEFORE_EXPIRY });
    expect(order).toEqual({ ...before, status: 'failed', version: version + 1 });
    expect(event).toMatchObject({ id: 'evt_2', type: 'order.failed', orderId: 'ord_abc', reference: 'INV-42', sequence: version + 1, createdAt: BEFORE_EXPIRY });
    expect(event.data).toEqual({
      id: 'ord_abc',
      reference: 'INV-42',
      amount: 2500,
      currency: 'EUR',
      reason: {
        decline_code: 'insufficient_funds',
        message: DECLINES.insufficient_funds.operatorMessage,
        route: 'primary',
        retried: true,
        attempt_id: 'att_9',
        method: 'card',
      },
    });
  });

  it('leaves method and settlement unset', () => {
    const { order } = markFailed(anOrder(), failure, ids);
    expect(order.method).toBeNull();
    expect(order.settlement).toBeNull();
  });
});

describe('markExpired', () => {
  it.each<[OrderStatus, number]>([
    ['pending', 1],
    ['failed', 4],
  ])('from %s emits order.expired with the expiry time', (status, version) => {
    const before = anOrder({ status, version });
    const { order, event } = markExpired(before, { eventId: 'evt_3', now: EXPIRES });
    expect(order).toEqual({ ...before, status: 'expired', version: version + 1 });
    expect(event).toMatchObject({ id: 'evt_3', type: 'order.expired', orderId: 'ord_abc', sequence: version + 1, createdAt: EXPIRES });
    expect(event.data).toEqual({ id: 'ord_abc', reference: 'INV-42', amount: 2500, currency: 'EUR', expires_at: '2026-03-02T10:00:00.000Z' });
  });
});

describe('final states', () => {
  it.each<OrderStatus>(['paid', 'expired'])('%s accepts no further transition', (status) => {
    const order = anOrder({ status, version: 2 });
    expect(() => markPaid(order, paid, ids)).toThrow(`illegal order transition ${status} -> paid`);
    expect(() => markFailed(order, failure, ids)).toThrow(`illegal order transition ${status} -> failed`);
    expect(() => markExpired(order, ids)).toThrow(`illegal order transition ${status} -> expired`);
  });

  it('numbers events by the order version across a run of changes', () => {
    const first = markFailed(anOrder(), failure, { eventId: 'evt_a', now: BEFORE_EXPIRY });
    const second = markFailed(first.order, failure, { eventId: 'evt_b', now: BEFORE_EXPIRY });
    const third = markPaid(second.order, paid, { eventId: 'evt_c', now: BEFORE_EXPIRY });
    expect([first, second, third].map((t) => [t.order.version, t.event.sequence])).toEqual([
      [2, 2],
      [3, 3],
      [4, 4],
    ]);
  });
});

describe('assertPayable', () => {
  it('lets a pending or failed order before its expiry be paid', () => {
    expect(codeOf(anOrder(), BEFORE_EXPIRY)).toBe('payable');
    expect(codeOf(anOrder({ status: 'failed' }), BEFORE_EXPIRY)).toBe('payable');
    expect(codeOf(anOrder(), new Date(EXPIRES.getTime() - 1))).toBe('payable');
  });

  it('refuses a paid order as already paid, even after its expiry time', () => {
    expect(codeOf(anOrder({ status: 'paid' }), BEFORE_EXPIRY)).toBe('checkout.already_paid');
    expect(codeOf(anOrder({ status: 'paid' }), new Date(EXPIRES.getTime() + 1))).toBe('checkout.already_paid');
  });

  it('refuses an expired order', () => {
    expect(codeOf(anOrder({ status: 'expired' }), BEFORE_EXPIRY)).toBe('checkout.expired');
  });

  it.each<OrderStatus>(['pending', 'failed'])('refuses a %s order from the moment it is due to expire', (status) => {
    expect(codeOf(anOrder({ status }), EXPIRES)).toBe('checkout.expired');
    expect(codeOf(anOrder({ status }), new Date(EXPIRES.getTime() + 60_000))).toBe('checkout.expired');
  });
});

describe('isDueToExpire', () => {
  it.each<[OrderStatus, Date, boolean]>([
    ['pending', BEFORE_EXPIRY, false],
    ['pending', new Date(EXPIRES.getTime() - 1), false],
    ['pending', EXPIRES, true],
    ['failed', EXPIRES, true],
    ['failed', BEFORE_EXPIRY, false],
    ['paid', EXPIRES, false],
    ['expired', new Date(EXPIRES.getTime() + 1), false],
  ])('%s at %s → %s', (status, now, due) => {
    expect(isDueToExpire(anOrder({ status }), now)).toBe(due);
  });
});

describe('noteReversal', () => {
  it.each(['pending', 'failed', 'paid', 'expired'] as const)('keeps a %s order in its state, moves its version on and tells of the reversal', (status) => {
    const { order, event } = noteReversal(anOrder({ status, version: 3 }), { attemptId: 'att_7', method: 'card', route: 'simulated_alpha', reason: 'order_paid' }, ids);
    expect(order).toMatchObject({ status, version: 4 });
    expect(event).toMatchObject({ type: 'order.payment_reversed', orderId: 'ord_abc', reference: 'INV-42', sequence: 4 });
    expect(event.data).toMatchObject({ id: 'ord_abc', status, amount: 2500, reversal: { attempt_id: 'att_7', method: 'card', route: 'simulated_alpha', reason: 'order_paid' } });
    expect((event.data.reversal as { message: string }).message).toMatch(/reversed/);
  });
});
