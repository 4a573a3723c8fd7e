import { describe, expect, it } from 'vitest';
import { backoffDelay, isRetryable, parseRetryAfter, RETRY_BASE_MS, RETRY_CAP_MS } from './retry.ts';

describe('backoffDelay', () => {
  it('draws from 0 up to base·2^(n−1), capped at 8 s (full jitter)', () => {
    const top = () => 0.999_999;
    expect([1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, top))).toEqual([499, 999, 1999, 3999, 7999, 7999, 7999]);
    expect(backoffDelay(1, () => 0)).toBe(0);
    expect(backoffDelay(3, () => 0.5)).toBe(1000);
    expect(RETRY_BASE_MS).toBe(500);
    expect(RETRY_CAP_MS).toBe(8000);
  });

  it('waits at least what Retry-After asked', () => {
    expect(backoffDelay(1, () => 0, 3000)).toBe(3000);
    expect(backoffDelay(5, () => 0.9, 1000)).toBe(7200);
  });
});

describe('isRetryable', () => {
  it('retries no answer, 5xx and in-flight conflicts', () => {
    expect(isRetryable({ kind: 'network' })).toBe(true);
    expect(isRetryable({ kind: 'timeout' })).toBe(true);
    expect(isRetryable({ kind: 'response', status: 500, code: 'internal_error' })).toBe(true);
    expect(isRetryable({ kind: 'response', status: 503 })).toBe(true);
    expect(isRetryable({ kind: 'response', status: 409, code: 'concurrent_change' })).toBe(true);
    expect(isRetryable({ kind: 'response', status: 409, code: 'payment_in_progress' })).toBe(true);
    expect(isRetryable({ kind: 'response', status: 429, code: 'rate_limit_exceeded' })).toBe(true);
  });

  it('never retries a 4xx that would fail the same way again', () => {
    for (const [status, code] of [
      [400, 'amount_invalid'],
      [401, 'api_key_invalid'],
      [403, 'secret_key_required'],
      [404, 'resource_missing'],
      [409, 'order_not_capturable'],
      [409, undefined],
      [422, 'idempotency_key_reused'],
      [429, 'too_many_payment_attempts'],
      [429, 'attempts_exhausted'],
    ] as const) {
      expect(isRetryable({ kind: 'response', status, code }), `${status} ${code}`).toBe(false);
    }
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2', 0)).toBe(2000);
    expect(parseRetryAfter(null, 0)).toBeUndefined();
    expect(parseRetryAfter('soon', 0)).toBeUndefined();
    const now = Date.parse('2030-01-01T00:00:00Z');
    expect(parseRetryAfter('Tue, 01 Jan 2030 00:00:05 GMT', now)).toBe(5000);
  });
});
