import { describe, expect, it } from 'vitest';
import { keyFromAuthorization, parseApiKey } from './api-key.ts';

describe('API keys', () => {
  it('tells kind and mode from the key text', () => {
    expect(parseApiKey(`sk_test_${'a'.repeat(32)}`)).toEqual({ kind: 'secret', livemode: false });
    expect(parseApiKey(`sk_live_${'B'.repeat(32)}`)).toEqual({ kind: 'secret', livemode: true });
    expect(parseApiKey(`pk_test_${'9'.repeat(32)}`)).toEqual({ kind: 'publishable', livemode: false });
  });

  it.each(['sk_test_short', `rk_test_${'a'.repeat(32)}`, `sk_prod_${'a'.repeat(32)}`, `sk_test_${'a'.repeat(31)}!`])('rejects malformed %s', (key) => {
    expect(() => parseApiKey(key)).toThrow(expect.objectContaining({ code: 'auth.key_malformed' }));
  });

  it('reads Bearer headers and names the missing or malformed case', () => {
    expect(keyFromAuthorization('Bearer sk_test_x')).toBe('sk_test_x');
    expect(keyFromAuthorization('bearer   sk_test_x ')).toBe('sk_test_x');
    expect(() => keyFromAuthorization(undefined)).toThrow(expect.objectContaining({ code: 'auth.key_missing' }));
    expect(() => keyFromAuthorization('  ')).toThrow(expect.objectContaining({ code: 'auth.key_missing' }));
    expect(() => keyFromAuthorization('Basic dXNlcjpwYXNz')).toThrow(expect.objectContaining({ code: 'auth.key_malformed' }));
  });
});
