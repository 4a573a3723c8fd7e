import type { Knex } from 'knex';
import type { RateLimitDecision, RateLimiter } from '../../ports/rate-limiter.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** A bucket's refill rate and size. */
export interface RateLimitPolicy {
  /** Tokens added per second. */
  readonly perSecond: number;
  /** The bucket's size (the burst allowed after a quiet spell). */
  readonly burst: number;
}

/** How long tokens taken from the shared bucket stay usable in this process. */
export const LEASE_MS = 1000;

interface Lease {
  tokens: number;
  expiresAt: number;
  /** How many tokens the last trip to the database asked for. */
  size: number;
  /** The shared bucket's level after that trip. */
  shared: number;
  /** After a refusal, further requests are refused here without asking the database until then. */
  deniedUntil: number;
  refilling: Promise<void> | undefined;
}

/**
 * Token buckets in Postgres (`rate_limit_take`, one statement under the
 * bucket row's lock), so every instance of the service draws on the same
 * bucket without a server of its own. To spare a round trip per request, a
 * process takes a small lease of tokens and spends it locally: one token
 * while traffic is light, doubling up to a tenth of the bucket while each
 * lease is used up within LEASE_MS. Tokens a lease leaves unused lapse, so
 * sharing can only make the limit stricter, never looser.
 */
export class PostgresRateLimiter implements RateLimiter {
  readonly #knex: Knex;
  readonly #policy: RateLimitPolicy;
  readonly #maxLease: number;
  readonly #leases = new Map<string, Lease>();

  constructor(knex: Knex, policy: RateLimitPolicy) {
    this.#knex = knex;
    this.#policy = policy;
    this.#maxLease = Math.max(1, Math.floor(policy.burst / 10));
  }

  async take(key: string): Promise<RateLimitDecision> {
    for (;;) {
      const now = Date.now();
      let lease = this.#leases.get(key);
      if (lease && lease.tokens > 0 && lease.expiresAt > now) {
        lease.tokens -= 1;
        return this.#decision(true, lease.shared + lease.tokens);
      }
      if (lease?.refilling) {
        await lease.refilling;
        continue;
      }
      if (lease && lease.deniedUntil > now) return this.#decision(false, lease.shared + (this.#policy.perSecond * (now - lease.expiresAt + LEASE_MS)) / 1000);
      if (!lease) {
        if (this.#leases.size >= 10_000) this.#evictExpired(now);
        lease = { tokens: 0, expiresAt: 0, size: 0, shared: 0, deniedUntil: 0, refilling: undefined };
        this.#leases.set(key, lease);
      }
      // Used up before it lapsed: traffic is steady, so the next lease is larger.
      const size = lease.expiresAt > now ? Math.min(this.#maxLease, lease.size * 2) : 1;
      const current = lease;
      let granted = 0;
      current.refilling = (async () => {
        const row = await translateErrors(() =>
          this.#knex.raw<{ rows: Array<{ granted: number; remaining: number }> }>('SELECT granted, remaining FROM rate_limit_take(?, ?, ?, ?)', [
            key,
            this.#policy.perSecond,
            this.#policy.burst,
            size,
          ]),
        );
        granted = row.rows[0]!.granted;
        current.shared = row.rows[0]!.remaining;
        current.tokens = granted;
        current.size = size;
        current.expiresAt = Date.now() + LEASE_MS;
      })().finally(() => {
        current.refilling = undefined;
      });
      await current.refilling;
      if (granted === 0) {
        const refused = this.#decision(false, current.shared);
        // Whoever ignores the 429 is answered from memory until a token can exist again.
        current.deniedUntil = Date.now() + Math.min(LEASE_MS, refused.retryAfterSeconds * 1000);
        return refused;
      }
    }
  }

  #decision(allowed: boolean, level: number): RateLimitDecision {
    const { perSecond, burst } = this.#policy;
    return {
      allowed,
      limit: burst,
      remaining: Math.max(0, Math.floor(level)),
      resetSeconds: Math.ceil(Math.max(0, burst - level) / perSecond),
      retryAfterSeconds: allowed ? 0 : Math.max(1, Math.ceil((1 - level) / perSecond)),
    };
  }

  #evictExpired(now: number): void {
    for (const [key, lease] of this.#leases) if (lease.expiresAt <= now && !lease.refilling) this.#leases.delete(key);
  }
}

/** Deletes buckets untouched for an hour (they would be full again anyway); answers how many went. */
export async function purgeIdleRateLimitBuckets(knex: Knex): Promise<number> {
  return translateErrors(() => knex('rate_limit_buckets').where('updated_at', '<', knex.raw(`now() - interval '1 hour'`)).delete());
}
