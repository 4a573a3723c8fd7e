import { describe, expect, it } from 'vitest';
import { webhookAction } from './webhook-action.ts';

const session = 'payses_01JABCDEF0123456789XYZ';
const order = { id: 'ord_1', reference: session, amount: 2599, currency: 'USD' };

describe('our webhook events as Medusa actions', () => {
  it('maps order events to the action, the session and the amount in major units', () => {
    expect(webhookAction({ type: 'order.paid', data: order })).toEqual({ action: 'captured', data: { session_id: session, amount: '25.99' } });
    expect(webhookAction({ type: 'order.paid', data: { ...order, amount_captured: 1000 } })).toEqual({ action: 'captured', data: { session_id: session, amount: '10' } });
    expect(webhookAction({ type: 'order.authorized', data: { ...order, amount_authorized: 2599 } })).toEqual({ action: 'authorized', data: { session_id: session, amount: '25.99' } });
    expect(webhookAction({ type: 'order.failed', data: order }).action).toBe('failed');
    expect(webhookAction({ type: 'order.expired', data: order }).action).toBe('canceled');
    expect(webhookAction({ type: 'order.voided', data: order }).action).toBe('canceled');
    expect(webhookAction({ type: 'order.refunded', data: { ...order, amount_refunded: 900, refund: { amount: 400 } } })).toEqual({ action: 'not_supported', data: { session_id: session, amount: '4' } });
  });

  it('leaves out what Medusa cannot tie to a payment session of its own', () => {
    expect(webhookAction({ type: 'order.paid', data: { ...order, reference: 'INV-1001' } })).toEqual({ action: 'not_supported' });
    expect(webhookAction({ type: 'payout.settled', data: { amount: 1 } })).toEqual({ action: 'not_supported' });
    expect(webhookAction({ type: 'order.created', data: order })).toEqual({ action: 'not_supported' });
    expect(webhookAction({ type: 'order.paid', data: { ...order, amount: -1 } })).toEqual({ action: 'not_supported' });
  });
});
