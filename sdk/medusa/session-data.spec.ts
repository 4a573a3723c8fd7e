import { describe, expect, it } from 'vitest';
import type { Order } from '@hosted-checkout/node';
import { readSessionData, sessionData, sessionStatus } from './session-data.ts';

const attempt = (status: Order['attempts'][number]['status']) => ({ status }) as Order['attempts'][number];

describe('our order in a Medusa payment session', () => {
  it('reads our statuses in Medusa\'s terms', () => {
    expect(sessionStatus({ status: 'paid' })).toBe('captured');
    expect(sessionStatus({ status: 'partially_refunded' })).toBe('captured');
    expect(sessionStatus({ status: 'authorized' })).toBe('authorized');
    expect(sessionStatus({ status: 'pending', attempts: [] })).toBe('requires_more');
    expect(sessionStatus({ status: 'pending', attempts: [attempt('requires_authentication')] })).toBe('pending');
    expect(sessionStatus({ status: 'pending', attempts: [attempt('failed')] })).toBe('requires_more');
    expect(sessionStatus({ status: 'failed' })).toBe('requires_more');
    for (const status of ['expired', 'voided', 'refunded'] as const) expect(sessionStatus({ status })).toBe('canceled');
  });

  it('keeps the client secret only while the order can be paid', () => {
    const order = { id: 'ord_1', checkout_url: 'http://pay/c/1', reference: 'payses_1', status: 'pending', amount: 100, currency: 'EUR', capture_method: 'automatic', amount_captured: null, amount_refunded: 0, livemode: false } as Order;
    const created = sessionData({ ...order, client_secret: 'ord_1_secret_x' }, 'payses_1');
    expect(created).toMatchObject({ checkout_order_id: 'ord_1', client_secret: 'ord_1_secret_x', session_id: 'payses_1', checkout_status: 'pending' });
    expect(sessionData(order, 'payses_1', created).client_secret).toBe('ord_1_secret_x');
    expect(sessionData({ ...order, status: 'paid' }, 'payses_1', created)).not.toHaveProperty('client_secret');
  });

  it('refuses data that names no order of ours', () => {
    expect(() => readSessionData({ session_id: 'payses_1' })).toThrow(/checkout_order_id/);
    expect(() => readSessionData(undefined)).toThrow(TypeError);
    expect(readSessionData({ checkout_order_id: 'ord_1' }).checkout_order_id).toBe('ord_1');
  });
});
