// Unit checks of the mobile session without a server: a fetch that fails or answers as scripted.
import { describe, expect, it } from 'vitest';
import { createCheckoutSession, newSubmissionId, CheckoutSessionError } from './session.ts';

const secret = 'ord_abc123_secret_' + 'x'.repeat(40);
const card = { number: '4242 4242 4242 4242', expMonth: 12, expYear: 2099, cvc: '123', name: 'Ada' };

describe('createCheckoutSession', () => {
  it('refuses something that is not an order client secret', () => {
    expect(() => createCheckoutSession({ baseUrl: 'http://127.0.0.1:1', publishableKey: 'pk_test_x', clientSecret: 'sk_test_nope' })).toThrow(CheckoutSessionError);
  });

  it('retries a network failure with the same request, then answers failed/network', async () => {
    const bodies: string[] = [];
    const fetch: typeof globalThis.fetch = async (_input, init) => {
      bodies.push(init?.body instanceof Uint8Array ? new TextDecoder().decode(init.body) : String(init?.body));
      throw new TypeError('network');
    };
    const s = createCheckoutSession({ baseUrl: 'http://127.0.0.1:1', publishableKey: 'pk_test_x', clientSecret: secret, fetch, maxRetries: 2, retryDelayMs: 1 });
    const result = await s.payWithCard(card);
    expect(result).toMatchObject({ kind: 'failed', reason: 'network' });
    expect(bodies).toHaveLength(3);
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ checkoutId: 'abc123', card: { number: '4242424242424242' } });
  });

  it('does not retry an answer, and sends the publishable key and client secret', async () => {
    const seen: Headers[] = [];
    const fetch: typeof globalThis.fetch = async (_input, init) => {
      seen.push(new Headers(init?.headers));
      return new Response(JSON.stringify({ code: 'unauthenticated', message: 'no' }), { status: 401, headers: { 'content-type': 'application/json' } });
    };
    const s = createCheckoutSession({ baseUrl: 'http://127.0.0.1:1', publishableKey: 'pk_test_x', clientSecret: secret, fetch });
    expect(await s.payWithCard(card)).toMatchObject({ kind: 'failed', reason: 'refused', code: 'unauthenticated' });
    expect(seen).toHaveLength(1);
    expect(seen[0]!.get('authorization')).toBe('Bearer pk_test_x');
    expect(seen[0]!.get('checkout-client-secret')).toBe(secret);
  });

  it('makes a fresh submission id each time', () => {
    expect(newSubmissionId()).not.toBe(newSubmissionId());
    expect(newSubmissionId()).toMatch(/^sub_[0-9a-f-]{32,36}$/);
  });
});
