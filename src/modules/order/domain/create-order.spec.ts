import { describe, expect, it } from 'vitest';
import type { DomainError, DomainErrorCode } from '../../../kernel/domain/domain-error.ts';
import { createOrder, validateCreateOrder, type CreateOrderCommand } from './create-order.ts';

const valid: CreateOrderCommand = {
  amount: 2500n,
  currency: 'EUR',
  reference: 'INV-1',
  lineItems: [
    { name: 'Tea', amount: 1500n },
    { name: 'Pot', amount: 1000n },
  ],
  returnUrl: 'https://shop.example/back',
  expiresAt: undefined,
};
const NOW = new Date('2026-01-02T00:00:00Z');

function failure(overrides: Partial<CreateOrderCommand>): { code: DomainErrorCode; param: string | undefined } | undefined {
  try {
    validateCreateOrder({ ...valid, ...overrides }, NOW);
    return undefined;
  } catch (err) {
    return { code: (err as DomainError).code, param: (err as DomainError).param };
  }
}

describe('validateCreateOrder', () => {
  it('accepts a valid command unchanged', () => {
    expect(validateCreateOrder(valid, NOW)).toEqual(valid);
  });

  it('accepts any Unicode reference of up to 255 code points', () => {
    const emoji = '🧾'.repeat(255); // 510 UTF-16 units, 255 code points
    expect(validateCreateOrder({ ...valid, reference: emoji }, NOW).reference).toBe(emoji);
    expect(failure({ reference: '🧾'.repeat(256) })).toEqual({ code: 'order.reference_invalid', param: 'reference' });
  });

  it.each<[string, Partial<CreateOrderCommand>, DomainErrorCode, string]>([
    ['empty reference', { reference: '' }, 'request.parameter_missing', 'reference'],
    ['lone surrogate', { reference: 'a\ud800b' }, 'order.reference_invalid', 'reference'],
    ['NUL in reference', { reference: 'a\u0000b' }, 'order.reference_invalid', 'reference'],
    ['missing currency', { currency: '' }, 'request.parameter_missing', 'currency'],
    ['zero amount', { amount: 0n, lineItems: [] }, 'money.amount_invalid', 'amount'],
    ['JPY amount too large', { currency: 'JPY', amount: 1_000_000_000n, lineItems: [] }, 'money.amount_too_large', 'amount'],
    ['sum mismatch', { amount: 2600n }, 'order.line_items_sum_mismatch', 'line_items'],
    ['negative line item', { lineItems: [{ name: 'x', amount: -1n }, { name: 'y', amount: 2501n }] }, 'money.amount_invalid', 'line_items[0][amount]'],
    ['unnamed line item', { lineItems: [{ name: '', amount: 2500n }] }, 'request.parameter_missing', 'line_items[0][name]'],
    ['relative return_url', { returnUrl: '/thanks' }, 'order.return_url_invalid', 'return_url'],
    ['expiry in 4 minutes', { expiresAt: new Date(NOW.getTime() + 4 * 60_000) }, 'order.expires_at_invalid', 'expires_at'],
    ['expiry in 31 days', { expiresAt: new Date(NOW.getTime() + 31 * 86_400_000) }, 'order.expires_at_invalid', 'expires_at'],
    ['javascript: return_url', { returnUrl: 'javascript:alert(1)' }, 'order.return_url_invalid', 'return_url'],
  ])('rejects %s', (_label, overrides, code, param) => {
    expect(failure(overrides)).toEqual({ code, param });
  });

  it('rejects more than 100 line items', () => {
    const lineItems = Array.from({ length: 101 }, () => ({ name: 'x', amount: 1n }));
    expect(failure({ amount: 101n, lineItems })).toEqual({ code: 'order.line_items_invalid', param: 'line_items' });
  });
});

describe('createOrder', () => {
  it('creates a pending order at version 1 and its order.created event with sequence 1', () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    const { order, event } = createOrder(valid, {
      orderId: 'ord_abc',
      eventId: 'evt_def',
      merchantId: 'mer_1',
      livemode: false,
      checkoutHost: 'https://pay.example/',
      checkoutToken: 'tok',
      now,
    });
    expect(order).toMatchObject({ id: 'ord_abc', status: 'pending', version: 1, checkoutUrl: 'https://pay.example/c/abc', createdAt: now });
    expect(order.expiresAt.getTime() - now.getTime()).toBe(24 * 3600_000);
    expect(event).toMatchObject({ id: 'evt_def', type: 'order.created', orderId: 'ord_abc', reference: 'INV-1', sequence: 1 });
    expect(event.data).toMatchObject({ id: 'ord_abc', amount: 2500, currency: 'EUR', status: 'pending', created: '2026-01-02T03:04:05.678Z' });
  });
});
