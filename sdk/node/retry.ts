// When a failed attempt is retried, and after how long: exponential backoff with full jitter.
// Pure functions, so the policy is tested without waiting.

/** The backoff's base and cap, in milliseconds. */
export const RETRY_BASE_MS = 500;
export const RETRY_CAP_MS = 8_000;
/** A Retry-After longer than this is not waited for: the error is thrown instead. */
export const MAX_RETRY_AFTER_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;

/**
 * Conflicts that mean "another request was busy with the same thing": nothing was done for this
 * one, so the same request with the same Idempotency-Key may be sent again.
 */
const RETRYABLE_CONFLICTS: ReadonlySet<string> = new Set(['concurrent_change', 'payment_in_progress']);

/** What the last attempt ended with. */
export type AttemptOutcome =
  | { kind: 'network' }
  | { kind: 'timeout' }
  | { kind: 'response'; status: number; code?: string | undefined };

/**
 * Whether an outcome is safe to retry: no answer (the request may or may not have been done: the
 * idempotency key makes the retry safe), a 5xx, a 409 in-flight conflict, or a 429 rate limit (nothing
 * was done). Every other 4xx would fail the same way again.
 */
export function isRetryable(outcome: AttemptOutcome): boolean {
  if (outcome.kind !== 'response') return true;
  if (outcome.status >= 500) return true;
  if (outcome.status === 409) return outcome.code !== undefined && RETRYABLE_CONFLICTS.has(outcome.code);
  if (outcome.status === 429) return outcome.code === 'rate_limit_exceeded';
  return false;
}

/** A Retry-After header (whole seconds, or an HTTP date) in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | null | undefined, now: number): number | undefined {
  if (value === null || value === undefined || value.trim() === '') return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * The wait before retry number `retry` (1 for the first): full jitter, a uniform draw from 0 to
 * min(cap, base·2^(retry−1)). A Retry-After the service sent is waited at least.
 * @param random a uniform draw in [0, 1), Math.random by default
 */
export function backoffDelay(retry: number, random: () => number = Math.random, retryAfterMs?: number): number {
  const ceiling = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** Math.max(0, retry - 1));
  const jittered = Math.floor(random() * ceiling);
  return retryAfterMs === undefined ? jittered : Math.max(jittered, retryAfterMs);
}
