/** The answer to one request for a token. */
export interface RateLimitDecision {
  readonly allowed: boolean;
  /** The bucket's size: the most requests that can come at once after a quiet spell. */
  readonly limit: number;
  /** Whole tokens left after this request (approximate when several instances share the bucket). */
  readonly remaining: number;
  /** Seconds until the bucket is full again. */
  readonly resetSeconds: number;
  /** When refused: seconds until a token is available again. */
  readonly retryAfterSeconds: number;
}

/**
 * A token bucket per key (an API key's id), shared by every instance of the
 * service: take() spends one token or says how long to wait.
 */
export interface RateLimiter {
  take(key: string): Promise<RateLimitDecision>;
}
