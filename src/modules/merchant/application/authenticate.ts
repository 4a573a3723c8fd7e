import { ApplicationError, type ApplicationErrorCode } from '../../../kernel/application/application-error.ts';
import type { HandlerContext } from '@connectrpc/connect';
import { velocityAddress } from '../../payment/domain/velocity.ts';
import type { AuthFailureLimiter } from '../ports/auth-failure-limiter.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import { CLIENT_ADDRESS } from '../../../kernel/application/request-context.ts';
import type { KeyKind } from '../domain/api-key.ts';
import { keyFromAuthorization, parseApiKey } from './api-key.ts';
import type { Caller } from '../domain/caller.ts';
import type { ApiKeyResolver } from '../ports/api-key-resolver.port.ts';
import type { RateLimiter } from '../ports/rate-limiter.port.ts';
import type { Metrics } from '../../../kernel/ports/metrics.port.ts';
import { AUTHENTICATED_CALLER } from '../../../kernel/application/request-context.ts';

/** Turns a call's Authorization header into a verified caller, and spends one of its key's rate-limit tokens; counts its client address's failures. */
export type Authenticate = (ctx: HandlerContext, required: KeyKind) => Promise<Caller>;

/** Response headers of the rate limit, on every authenticated answer (IETF RateLimit header fields draft). */
export const RATE_LIMIT_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'retry-after'] as const;

/**
 * A call refused by a rate limit: its key spent its tokens (rate_limit.exceeded), or its client
 * address failed to authenticate too often (auth.too_many_failures). The message says when to
 * retry; the Connect mapping carries Retry-After (and the RateLimit headers) as response metadata.
 */
export class RateLimitedError extends ApplicationError {
  readonly retryAfterSeconds: number;
  declare readonly headers: Readonly<Record<string, string>>;

  constructor(retryAfterSeconds: number, headers: Readonly<Record<string, string>>, code: 'rate_limit.exceeded' | 'auth.too_many_failures' = 'rate_limit.exceeded', message?: string) {
    super(code, message ?? `Too many requests with this API key; retry after ${retryAfterSeconds} s. See the RateLimit-* response headers.`, undefined, headers);
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Failures that count against the client address: a key was presented, and it is not one of ours. */
const COUNTED_FAILURES: ReadonlySet<ApplicationErrorCode> = new Set(['auth.key_malformed', 'auth.key_invalid']);

/** The limit on failed authentications per client address, with the time it runs on. */
export interface AuthFailureLimit {
  readonly limiter: AuthFailureLimiter;
  readonly clock: Clock;
}

/**
 * Creates the authentication use case. The mode comes from the key alone:
 * test and live keys reach the same code with a different scope. With a
 * limiter, every call spends a token of its key's bucket. With a failure
 * limit, a client address that sent too many malformed, unknown or revoked
 * keys is refused (429 too_many_authentication_failures) before its key is
 * even looked up, whatever key it sends, until its window ends; other
 * addresses, and successful calls, are not slowed (docs/api.md).
 * @throws DomainError auth.* for a missing, malformed, unknown or wrong kind of key
 * @throws RateLimitedError when the key's bucket is empty, or the address failed too often
 */
export function createAuthenticate(deps: {
  readonly keys: ApiKeyResolver;
  readonly limiter?: RateLimiter;
  readonly failures?: AuthFailureLimit;
  readonly metrics?: Pick<Metrics, 'rateLimitRefused'>;
}): Authenticate {
  const failures = deps.failures;
  const refused = (seconds: number) => {
    deps.metrics?.rateLimitRefused('auth_failures');
    return new RateLimitedError(
      seconds,
      { 'retry-after': String(seconds) },
      'auth.too_many_failures',
      `Too many failed authentications (malformed, unknown or revoked API keys) from your address; retry after ${seconds} s. Check the key your integration sends.`,
    );
  };

  /** The key's caller, or the reason it has none. */
  async function verify(ctx: HandlerContext, required: KeyKind): Promise<Caller> {
    const raw = keyFromAuthorization(ctx.requestHeader.get('authorization'));
    const parsed = parseApiKey(raw);
    const caller = await deps.keys.resolve(raw);
    if (!caller) {
      throw new ApplicationError('auth.key_invalid', `Invalid API key ${redact(raw)}: it is unknown or has been revoked.`);
    }
    if (required === 'secret' && parsed.kind !== 'secret') {
      throw new ApplicationError('auth.secret_key_required', 'This call needs a secret key (sk_…); publishable keys (pk_…) only make card tokens (POST /v1/tokens) and serve the checkout.');
    }
    return caller;
  }

  return async (ctx, required) => {
    const seen = failures ? ctx.values.get(CLIENT_ADDRESS) : undefined;
    // An IPv6 client counts as its /64, as for the card-testing limits: one host holds a whole /64. An
    // address is at most 45 characters; anything longer (a proxy trusted for more hops than there are
    // passes on what a client wrote) is cut, so it stays a small key.
    const address = seen ? velocityAddress(seen).slice(0, 64) : undefined;
    if (failures && address !== undefined) {
      // From memory only: the check in front of every call costs no query.
      const wait = failures.limiter.refusedFor(address, failures.clock.now());
      if (wait > 0) throw refused(wait);
    }
    let caller: Caller;
    try {
      caller = await verify(ctx, required);
    } catch (err) {
      if (failures && address !== undefined && err instanceof ApplicationError && COUNTED_FAILURES.has(err.code)) {
        const wait = await failures.limiter.fail(address, failures.clock.now());
        if (wait > 0) throw refused(wait);
      }
      throw err;
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
