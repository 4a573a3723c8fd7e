/** Deliveries are retried for this long after the event, then marked failed. */
export const RETRY_WINDOW_MS = 3 * 24 * 3600_000;

/** The retry schedule's shape: first retry after baseMs, doubling up to capMs, each ±25 % jitter. */
export interface RetryPolicy {
  readonly baseMs: number;
  readonly capMs: number;
  readonly windowMs: number;
}

/** Production schedule: 30 s, then 1, 2, 4, 8, 16, 32, 64, 128, 256 min, then every 6 h until 3 days have passed (about 21 tries). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { baseMs: 30_000, capMs: 6 * 3600_000, windowMs: RETRY_WINDOW_MS };

/**
 * Delay before the next try after `failures` failed attempts (1 after the
 * first failure). random is a number in [0, 1) for the jitter.
 */
export function retryDelayMs(policy: RetryPolicy, failures: number, random: number): number {
  const exponential = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  return Math.round(exponential * (0.75 + random * 0.5));
}
