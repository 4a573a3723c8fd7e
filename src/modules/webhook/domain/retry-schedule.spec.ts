import { describe, expect, test } from 'vitest';
import { DEFAULT_RETRY_POLICY, RETRY_WINDOW_MS, retryDelayMs, type RetryPolicy } from './retry-schedule.ts';

const MIN = 60_000;
const HOUR = 60 * MIN;

describe('retryDelayMs', () => {
  test('the production schedule without jitter: 30 s, 1, 2, 4, 8, 16, 32 min, 1, 2, 4 h, then 6 h', () => {
    const middle = 0.5; // random 0.5 → factor 1
    const delays = Array.from({ length: 13 }, (_, i) => retryDelayMs(DEFAULT_RETRY_POLICY, i + 1, middle));
    expect(delays).toEqual([30_000, MIN, 2 * MIN, 4 * MIN, 8 * MIN, 16 * MIN, 32 * MIN, 64 * MIN, 128 * MIN, 256 * MIN, 6 * HOUR, 6 * HOUR, 6 * HOUR]);
  });

  test('jitter is ±25 %: random 0 gives 75 %, random just below 1 gives almost 125 %', () => {
    const policy: RetryPolicy = { baseMs: 1000, capMs: 60_000, windowMs: HOUR };
    expect(retryDelayMs(policy, 1, 0)).toBe(750);
    expect(retryDelayMs(policy, 1, 0.999_999)).toBe(1250);
    expect(retryDelayMs(policy, 3, 0)).toBe(3000);
    expect(retryDelayMs(policy, 3, 0.999_999)).toBe(5000);
    for (let i = 0; i < 200; i += 1) {
      const d = retryDelayMs(policy, 2, Math.random());
      expect(d).toBeGreaterThanOrEqual(1500);
      expect(d).toBeLessThanOrEqual(2500);
    }
  });

  test('the cap bounds the delay (jitter included) and huge failure counts do not overflow', () => {
    const policy: RetryPolicy = { baseMs: 200, capMs: 1000, windowMs: HOUR };
    expect(retryDelayMs(policy, 4, 0.5)).toBe(1000);
    expect(retryDelayMs(policy, 50, 0.5)).toBe(1000);
    expect(retryDelayMs(policy, 1_000_000, 0)).toBe(750);
    expect(retryDelayMs(DEFAULT_RETRY_POLICY, Number.MAX_SAFE_INTEGER, 0.999_999)).toBeLessThanOrEqual(1.25 * 6 * HOUR);
    expect(Number.isFinite(retryDelayMs(DEFAULT_RETRY_POLICY, 5000, 0.5))).toBe(true);
  });

  test('a zero or negative failure count is treated as the first', () => {
    const policy: RetryPolicy = { baseMs: 100, capMs: 10_000, windowMs: HOUR };
    expect(retryDelayMs(policy, 0, 0.5)).toBe(100);
    expect(retryDelayMs(policy, -3, 0.5)).toBe(100);
  });

  test('the delays grow until the cap, whatever the jitter draws', () => {
    const policy: RetryPolicy = { baseMs: 200, capMs: 1000, windowMs: HOUR };
    // Worst case: one delay at +25 %, the next at -25 %: still growing while doubling (1.25 < 2 × 0.75).
    for (let failures = 1; failures < 3; failures += 1) {
      expect(retryDelayMs(policy, failures + 1, 0)).toBeGreaterThan(retryDelayMs(policy, failures, 0.999_999));
    }
  });

  test('the default schedule gives up after 3 days: the retries fit in the window', () => {
    expect(DEFAULT_RETRY_POLICY.windowMs).toBe(RETRY_WINDOW_MS);
    expect(RETRY_WINDOW_MS).toBe(3 * 24 * HOUR);
    let elapsed = 0;
    let attempts = 1;
    for (;;) {
      const next = elapsed + retryDelayMs(DEFAULT_RETRY_POLICY, attempts, 0.5);
      if (next > RETRY_WINDOW_MS) break;
      elapsed = next;
      attempts += 1;
    }
    // 30 s … 4 h sum to about 8.5 h, then every 6 h: about 21 attempts in 3 days.
    expect(attempts).toBeGreaterThanOrEqual(20);
    expect(attempts).toBeLessThanOrEqual(23);
  });
});
