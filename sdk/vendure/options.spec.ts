import { describe, expect, it } from 'vitest';
import { createCheckoutClients } from './options.ts';

const valid = { baseUrl: 'http://127.0.0.1:8080', secretKey: 'sk_test_abc', webhookSecret: 'whsec_abc' };

describe('createCheckoutClients', () => {
  it('sends the secret key as bearer, and the idempotency key when given', () => {
    const clients = createCheckoutClients(valid);
    expect(clients.callOptions().headers).toEqual({ authorization: 'Bearer sk_test_abc' });
    expect(clients.callOptions('vendure:ABC:payment:1').headers).toEqual({ authorization: 'Bearer sk_test_abc', 'idempotency-key': 'vendure:ABC:payment:1' });
  });

  it('names the likely mistake in the options', () => {
    expect(() => createCheckoutClients({ ...valid, baseUrl: 'api.checkout.example' })).toThrow(/absolute http\(s\) URL/);
    expect(() => createCheckoutClients({ ...valid, secretKey: 'pk_test_abc' })).toThrow(/publishable key/);
    expect(() => createCheckoutClients({ ...valid, secretKey: '' })).toThrow(/environment variable/);
    expect(() => createCheckoutClients({ ...valid, webhookSecret: 'abc' })).toThrow(/whsec_/);
    expect(() => createCheckoutClients({ ...valid, webhookSecret: [] })).toThrow(/whsec_/);
    expect(() => createCheckoutClients({ ...valid, webhookSecret: ['whsec_new', 'whsec_old'] })).not.toThrow();
  });
});
