import type { Knex } from 'knex';
import type { AuthFailureLimiter } from '../../ports/auth-failure-limiter.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** How many failed authentications one client address may make in a window. */
export interface AuthFailurePolicy {
  /** Failures allowed per address in a window; the next one, and every request after it until the window ends, is refused. */
  readonly limit: number;
  /** The window, from an address's first failure in it (at most an hour: the janitor deletes older rows). */
  readonly windowMs: number;
}

/** Refused addresses this process remembers at most (about a megabyte); past that, the oldest are asked of the database again. */
export const MAX_REMEMBERED_ADDRESSES = 10_000;

/**
 * Fixed windows per client address in Postgres (`auth_failures`, migration 025): a failure is one
 * upsert under the address's row lock, so every instance counts into the same window. Only failures
 * touch the database; an address over the limit is then remembered in memory until its window ends,
 * and refused from there without a query or a key lookup, so a flood of bad keys costs one query
 * per address and window per process. Successful authentications only read the map.
 */
export class PostgresAuthFailureLimiter implements AuthFailureLimiter {
  readonly #knex: Knex;
  readonly #policy: AuthFailurePolicy;
  /** Refused addresses and until when (ms), oldest first. */
  readonly #refused = new Map<string, number>();

  constructor(knex: Knex, policy: AuthFailurePolicy) {
    this.#knex = knex;
    this.#policy = policy;
  }

  refusedFor(address: string, now: Date): number {
    const until = this.#refused.get(address);
    if (until === undefined) return 0;
    if (until <= now.getTime()) {
      this.#refused.delete(address);
      return 0;
    }
    return Math.ceil((until - now.getTime()) / 1000);
  }

  async fail(address: string, now: Date): Promise<number> {
    const { limit, windowMs } = this.#policy;
    const result = await translateErrors(() =>
      this.#knex.raw<{ rows: Array<{ window_start: Date; failures: number }> }>(
        `INSERT INTO auth_failures AS f (address, window_start, failures) VALUES (:address, :now, 1)
         ON CONFLICT (address) DO UPDATE SET
           window_start = CASE WHEN f.window_start <= :ended THEN :now ELSE f.window_start END,
           failures = CASE WHEN f.window_start <= :ended THEN 1 ELSE f.failures + 1 END
         RETURNING window_start, failures`,
        { address, now, ended: new Date(now.getTime() - windowMs) },
      ),
    );
    const row = result.rows[0]!;
    if (row.failures <= limit) return 0;
    // Another instance's clock may run a little ahead: never longer than one window.
    const until = Math.min(new Date(row.window_start).getTime() + windowMs, now.getTime() + windowMs);
    if (until <= now.getTime()) return 0;
    this.#remember(address, until, now.getTime());
    return Math.max(1, Math.ceil((until - now.getTime()) / 1000));
  }

  #remember(address: string, until: number, now: number): void {
    this.#refused.delete(address);
    if (this.#refused.size >= MAX_REMEMBERED_ADDRESSES) {
      for (const [known, knownUntil] of this.#refused) if (knownUntil <= now) this.#refused.delete(known);
      // Still full: forget the oldest; its next failure asks the database, which still refuses it.
      while (this.#refused.size >= MAX_REMEMBERED_ADDRESSES) this.#refused.delete(this.#refused.keys().next().value!);
    }
    this.#refused.set(address, until);
  }
}

/** Deletes the counts of windows that have ended (every window is at most an hour); answers how many went. */
export async function purgeEndedAuthFailureWindows(knex: Knex): Promise<number> {
  return translateErrors(() => knex('auth_failures').where('window_start', '<', knex.raw(`now() - interval '1 hour'`)).delete());
}
