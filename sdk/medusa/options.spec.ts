import { describe, expect, it } from 'vitest';
import { checkOptions } from './options.ts';

const valid = { baseUrl: 'https://api.checkout.example', secretKey: 'sk_test_123', webhookSecret: 'whsec_abc' };

describe('the provider\'s options', () => {
  it('accepts a complete configuration, two webhook secrets during a rotation', () => {
    expect(checkOptions(valid)).toBe(valid);
    expect(() => checkOptions({ ...valid, webhookSecret: ['whsec_new', 'whsec_old'], captureMethod: 'manual', returnUrl: 'https://shop.example/done', maxRetries: 0 })).not.toThrow();
  });

  it('names the likely mistake', () => {
    expect(() => checkOptions({ ...valid, secretKey: 'pk_test_123' })).toThrow(/publishable key/);
    expect(() => checkOptions({ ...valid, secretKey: undefined })).toThrow(/environment variable/);
    expect(() => checkOptions({ ...valid, baseUrl: 'api.checkout.example' })).toThrow(/baseUrl/);
    expect(() => checkOptions({ ...valid, webhookSecret: 'secret' })).toThrow(/whsec_/);
    expect(() => checkOptions({ ...valid, captureMethod: 'later' })).toThrow(/captureMethod/);
    expect(() => checkOptions({ ...valid, returnUrl: '/done' })).toThrow(/returnUrl/);
    expect(() => checkOptions({ ...valid, refundReason: 'because' })).toThrow(/refundReason/);
    expect(() => checkOptions({ ...valid, timeoutMs: 0 })).toThrow(/timeoutMs/);
    expect(() => checkOptions(undefined)).toThrow(TypeError);
  });
});
