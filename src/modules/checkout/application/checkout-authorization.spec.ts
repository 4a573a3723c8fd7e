import { describe, expect, it } from 'vitest';
import type { Order } from '../../order/domain/order.entity.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { authorizeCheckout, fieldsOriginOf, hashClientSecret, newClientSecret, requireClientSecret, type CheckoutCredential } from './checkout-authorization.ts';
import { returnUrlOf } from '../../payment/application/pay-order.ts';

const CREATED = new Date('2026-03-01T10:00:00Z');
const SECRET_EXPIRES = new Date('2026-03-02T10:00:00Z');
const NOW = new Date('2026-03-01T12:00:00Z');
const SECRET = newClientSecret('ord_abc', 'r4nd0m');
const SCOPE = { merchantId: 'mer_1', livemode: false };

function anOrder(overrides: Partial<Order> = {}): Order {
  return {
    id: 'ord_abc', merchantId: 'mer_1', livemode: false, reference: 'INV-42', amount: 2_500n, currency: 'EUR', status: 'pending',
    lineItems: [], returnUrl: null, checkoutUrl: 'https://pay.example/c/abc', method: null, settlement: null, captureMethod: 'automatic',
    amountCaptured: null, authorizationExpiresAt: null, amountRefunded: 0n, settledAt: null, createdAt: CREATED, expiresAt: SECRET_EXPIRES,
    checkoutToken: 'tok', clientSecretHash: hashClientSecret(SECRET), clientSecretExpiresAt: SECRET_EXPIRES, version: 1,
    ...overrides,
  };
}

const codeOf = (order: Order, credential: CheckoutCredential, now = NOW): string | undefined => {
  try {
    authorizeCheckout(order, credential, now);
    return undefined;
  } catch (err) {
    if (err instanceof ApplicationError) return err.code;
    throw err;
  }
};

describe('authorizeCheckout', () => {
  it('accepts the page\'s token, and refuses another or none as checkout.token_invalid', () => {
    expect(codeOf(anOrder(), { kind: 'checkout_token', token: 'tok' })).toBeUndefined();
    expect(codeOf(anOrder(), { kind: 'checkout_token', token: 'tok2' })).toBe('checkout.token_invalid');
    expect(codeOf(anOrder(), { kind: 'checkout_token', token: '' })).toBe('checkout.token_invalid');
  });

  it('accepts the order\'s client secret with a key of its merchant and mode, until it expires', () => {
    expect(codeOf(anOrder(), { kind: 'client_secret', scope: SCOPE, secret: SECRET })).toBeUndefined();
    expect(codeOf(anOrder(), { kind: 'client_secret', scope: SCOPE, secret: SECRET }, new Date(SECRET_EXPIRES.getTime() - 1))).toBeUndefined();
    expect(codeOf(anOrder(), { kind: 'client_secret', scope: SCOPE, secret: SECRET }, SECRET_EXPIRES)).toBe('checkout.client_secret_invalid');
  });

  it('refuses every other client secret as checkout.client_secret_invalid', () => {
    const refused = (order: Order, credential: CheckoutCredential) => expect(codeOf(order, credential)).toBe('checkout.client_secret_invalid');
    refused(anOrder(), { kind: 'client_secret', scope: SCOPE, secret: `${SECRET}x` });
    refused(anOrder(), { kind: 'client_secret', scope: SCOPE, secret: newClientSecret('ord_other', 'r4nd0m') });
    refused(anOrder(), { kind: 'client_secret', scope: { merchantId: 'mer_2', livemode: false }, secret: SECRET });
    refused(anOrder(), { kind: 'client_secret', scope: { merchantId: 'mer_1', livemode: true }, secret: SECRET });
    refused(anOrder({ clientSecretHash: null, clientSecretExpiresAt: null }), { kind: 'client_secret', scope: SCOPE, secret: SECRET });
    // The page's token is no client secret, and the secret is no page token.
    refused(anOrder(), { kind: 'client_secret', scope: SCOPE, secret: 'tok' });
    expect(codeOf(anOrder(), { kind: 'checkout_token', token: SECRET })).toBe('checkout.token_invalid');
  });

  it('requires a client secret beside a key', () => {
    expect(() => requireClientSecret(null)).toThrow(ApplicationError);
    expect(() => requireClientSecret('')).toThrow(ApplicationError);
    expect(requireClientSecret(SECRET)).toBe(SECRET);
  });
});

describe('the embedded fields\' origin on a payment', () => {
  it.each([
    ['https://shop.example', 'https://shop.example'],
    ['http://127.0.0.2:8080', 'http://127.0.0.2:8080'],
    ['https://shop.example/', undefined],
    ['https://shop.example/pay?x=1', undefined],
    ['javascript:alert(1)', undefined],
    ['null', undefined],
    [null, undefined],
  ])('%s announced → %s', (header, expected) => {
    expect(fieldsOriginOf(header)).toBe(expected);
  });

  it('rides on the return leg, encoded, only when announced', () => {
    const order = anOrder();
    expect(returnUrlOf(order, 'att_1')).toBe('https://pay.example/c/abc/return/att_1');
    expect(returnUrlOf(order, 'att_1', 'https://shop.example')).toBe('https://pay.example/c/abc/return/att_1?fields_origin=https%3A%2F%2Fshop.example');
  });
});
