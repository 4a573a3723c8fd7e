import { ApplicationError } from '../shared/application-error.ts';
import type { HandlerContext } from '@connectrpc/connect';
import type { KeyKind } from '../../domain/merchant/api-key.ts';
import { keyFromAuthorization, parseApiKey } from './api-key.ts';
import type { Caller } from '../../domain/merchant/caller.ts';
import type { ApiKeyResolver } from '../../ports/merchant/api-key-resolver.port.ts';
import type { RateLimiter } from '../../ports/merchant/rate-limiter.port.ts';
import type { Metrics } from '../../ports/telemetry/metrics.port.ts';
import { AUTHENTICATED_CALLER } from '../shared/request-context.ts';

/** Turns a call's Authorization header into a verified caller, and spends one of its key's rate-limit tokens. */
export type Authenticate = (ctx: HandlerContext, required: KeyKind) => Promise<Caller>;

/** Response headers of the rate limit, on every authenticated answer (IETF RateLimit header fields draft). */
export const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'] as const;

/**
 * A key that spent its tokens. The message says when to retry; the
 * Connect mapping carries Retry-After as response metadata.
 */
export class RateLimitedError extends ApplicationError {
  readonly retryAfterSeconds: number;
  readonly headers: Readonly<Record<string, string>>;

  constructor(retryAfterSeconds: number, headers: Readonly<Record<string, string>>) {
    super('rate_limit.exceeded', `Too many requests with this API key; retry after ${retryAfterSeconds} s. See the RateLimit-* response headers.`);
    this.retryAfterSeconds = retryAfterSeconds;
    this.headers = headers;
  }
}

/**
 * Creates the authentication use case. The mode comes from the key alone:
 * test and live keys reach the same code with a different scope. With a
 * limiter, every call spends a token of its key's bucket.
 * @throws DomainError auth.* for a missing, malformed, unknown or wrong kind of key
 * @throws RateLimitedError when the key's bucket is empty
 */
export function createAuthenticate(deps: { readonly keys: ApiKeyResolver; readonly limiter?: RateLimiter; readonly metrics?: Pick<Metrics, 'rateLimitRefused'> }): Authenticate {
  return async (ctx, required) => {
    const raw = keyFromAuthorization(ctx.requestHeader.get('authorization'));
    const parsed = parseApiKey(raw);
    const caller = await deps.keys.resolve(raw);
    if (!caller) {
      throw new ApplicationError('auth.key_invalid', `Invalid API key ${redact(raw)}: it is unknown or has been revoked.`);
    }
    if (required === 'secret' && parsed.kind !== 'secret') {
      throw new ApplicationError('auth.secret_key_required', 'This call needs a secret key (sk_…); publishable keys (pk_…) only make card tokens (POST /v1/tokens) and serve the checkout.');
    }
    if (deps.limiter) {
      const decision = await deps.limiter.take(caller.keyId);
      const headers: Record<string, string> = {
        'ratelimit-limit': String(decision.limit),
        'ratelimit-remaining': String(decision.remaining),
        'ratelimit-reset': String(decision.resetSeconds),
      };
      if (!decision.allowed) deps.metrics?.rateLimitRefused('api_key');
      if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds, { ...headers, 'retry-after': String(decision.retryAfterSeconds) });
      for (const [name, value] of Object.entries(headers)) ctx.responseHeader.set(name, value);
    }
    ctx.values.set(AUTHENTICATED_CALLER, caller);
    return caller;
  };
}

/** Shows enough of a key to recognise it, never enough to use it. */
function redact(key: string): string {
  return `${key.slice(0, key.indexOf('_', 3) + 1)}…${key.slice(-4)}`;
}
