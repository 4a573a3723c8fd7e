import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { AUTHORIZATION_VALIDITY_MS, authorizationExpiry, isAuthorizationDue, parseCaptureMethod, planCapture } from './capture.ts';
import { capturedAmount, markAuthorized, markPaid, markVoided, noteRefund } from './order-transitions.ts';
import type { Order } from './order.entity.ts';

const NOW = new Date('2026-03-01T10:00:00Z');
const ids = { eventId: 'evt_1', now: NOW };

/** An authorized manual order of 25.00 EUR; overrides name only what a test is about. */
function anOrder(overrides: Partial<Order> = {}): Order {
  return {
    id: 'ord_abc', merchantId: 'mer_1', livemode: false, reference: 'INV-7', amount: 2_500n, currency: 'EUR', status: 'authorized',
    lineItems: [], returnUrl: null, checkoutUrl: 'https://pay.example/c/abc', method: 'card', settlement: null,
    captureMethod: 'manual', amountCaptured: null, authorizationExpiresAt: authorizationExpiry(NOW),
    amountRefunded: 0n, settledAt: null, createdAt: NOW, expiresAt: NOW, checkoutToken: 'tok', version: 2, ...overrides,
  };
}

function codeOf(fn: () => unknown): string {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof DomainError ? err.code : String(err);
  }
}

describe('planCapture', () => {
  it('captures the whole authorization when no amount is given, or the amount asked for', () => {
    expect(planCapture(anOrder(), undefined, NOW)).toBe(2_500n);
    expect(planCapture(anOrder(), 1n, NOW)).toBe(1n);
    expect(planCapture(anOrder(), 2_500n, NOW)).toBe(2_500n);
  });

  it.each([
    ['above the authorized amount', anOrder(), 2_501n, 'capture.exceeds_authorized'],
    ['zero', anOrder(), 0n, 'money.amount_invalid'],
    ['negative', anOrder(), -5n, 'money.amount_invalid'],
    ['beyond the currency', anOrder({ amount: 10n ** 15n }), 10n ** 14n, 'money.amount_too_large'],
    ['of a pending order', anOrder({ status: 'pending' }), undefined, 'capture.order_not_capturable'],
    ['of a paid order', anOrder({ status: 'paid' }), undefined, 'capture.order_not_capturable'],
    ['of an automatic paid order', anOrder({ status: 'paid', captureMethod: 'automatic' }), undefined, 'capture.order_not_capturable'],
    ['of a voided order', anOrder({ status: 'voided' }), undefined, 'capture.order_not_capturable'],
    ['after the authorization ran out', anOrder({ authorizationExpiresAt: NOW }), undefined, 'capture.order_not_capturable'],
  ])('refuses a capture %s', (_, order, amount, code) => {
    expect(codeOf(() => planCapture(order, amount, NOW))).toBe(code);
  });
});

describe('the authorization window', () => {
  it('is 7 days, and is due from its last instant on', () => {
    expect(AUTHORIZATION_VALIDITY_MS).toBe(7 * 24 * 3600_000);
    const order = anOrder();
    expect(isAuthorizationDue(order, new Date(NOW.getTime() + AUTHORIZATION_VALIDITY_MS - 1))).toBe(false);
    expect(isAuthorizationDue(order, new Date(NOW.getTime() + AUTHORIZATION_VALIDITY_MS))).toBe(true);
    expect(isAuthorizationDue(anOrder({ status: 'paid' }), new Date(NOW.getTime() + 2 * AUTHORIZATION_VALIDITY_MS))).toBe(false);
  });
});

describe('parseCaptureMethod', () => {
  it('takes automatic and manual, nothing else', () => {
    expect(parseCaptureMethod('manual')).toBe('manual');
    expect(parseCaptureMethod('automatic')).toBe('automatic');
    expect(codeOf(() => parseCaptureMethod('later'))).toBe('order.capture_method_invalid');
  });
});

describe('manual capture transitions', () => {
  it('authorizes a pending manual order with order.authorized, and never an automatic one', () => {
    const pending = anOrder({ status: 'pending', method: null, authorizationExpiresAt: null, version: 1 });
    const { order, event } = markAuthorized(pending, { method: 'card', expiresAt: authorizationExpiry(NOW) }, ids);
    expect(order).toMatchObject({ status: 'authorized', version: 2, method: 'card', settlement: null, amountCaptured: null, authorizationExpiresAt: new Date('2026-03-08T10:00:00Z') });
    expect(event).toMatchObject({ type: 'order.authorized', sequence: 2 });
    expect(event.data).toEqual({ id: 'ord_abc', reference: 'INV-7', amount: 2500, currency: 'EUR', method: 'card', amount_authorized: 2500, authorization_expires_at: '2026-03-08T10:00:00.000Z' });
    expect(() => markAuthorized({ ...pending, captureMethod: 'automatic' }, { method: 'card', expiresAt: NOW }, ids)).toThrow(/automatically/);
  });

  it('pays a partial capture: amount_captured on the order and on order.paid, refunds bounded by it', () => {
    const { order, event } = markPaid(anOrder(), { method: 'card', settlement: { currency: 'EUR', amount: 958n }, captured: 1_000n }, ids);
    expect(order).toMatchObject({ status: 'paid', amountCaptured: 1_000n, authorizationExpiresAt: null });
    expect(event.data).toMatchObject({ amount: 2500, amount_captured: 1000 });
    expect(capturedAmount(order)).toBe(1_000n);
    const refunded = noteRefund(order, { id: 're_1', amount: 1_000n, currency: 'EUR', reason: 'other', note: '' }, ids);
    expect(refunded.order.status).toBe('refunded');
    expect(() => noteRefund(order, { id: 're_2', amount: 1_001n, currency: 'EUR', reason: 'other', note: '' }, ids)).toThrow(/exceed/);
  });

  it('voids an authorized order with its reason, and needs one exactly then', () => {
    const { order, event } = markVoided(anOrder(), ids, 'authorization_expired');
    expect(order).toMatchObject({ status: 'voided', authorizationExpiresAt: null });
    expect(event.data).toEqual({ id: 'ord_abc', reference: 'INV-7', amount: 2500, currency: 'EUR', reason: 'authorization_expired' });
    expect(() => markVoided(anOrder(), ids)).toThrow();
    expect(() => markVoided(anOrder({ status: 'paid' }), ids, 'requested')).toThrow();
  });

  it('refuses to capture an authorized order twice: authorized leads only to paid or voided', () => {
    const paid = markPaid(anOrder(), { method: 'card', settlement: { currency: 'EUR', amount: 2_440n } }, ids).order;
    expect(() => markPaid(paid, { method: 'card', settlement: { currency: 'EUR', amount: 2_440n } }, ids)).toThrow(/illegal/);
  });
});
