import type { Knex } from 'knex';

/**
 * Routes as data (issue 21.5): a merchant's ordered list of processor routes per mode. A payment
 * is authorized on the first; an outcome the failover rule moves on (a soft decline) goes to the
 * next (src/modules/payment/domain/routing.ts). A merchant with no rows in a mode takes the mode's
 * default: in test mode the simulated acquirers, simulated_alpha then simulated_beta (the primary
 * and alternative routes of before); in live mode none, so a live payment fails with
 * processing_unavailable as before. `processor` names a processor this build registers (an unknown
 * name is skipped); `processor_account_id` is the merchant's account at it, for the processor
 * settings still to come (null: the processor's own default). A new empty table: nothing is
 * rewritten, and payments route as before until a merchant has rows.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE TABLE payment_routes (
      merchant_id text NOT NULL REFERENCES merchants (id),
      livemode boolean NOT NULL,
      position integer NOT NULL CHECK (position >= 0),
      processor text NOT NULL CHECK (processor ~ '^[a-z][a-z0-9_]{0,62}$'),
      processor_account_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (merchant_id, livemode, position)
    )`);
}

/** Reverts 029: every merchant routes by its mode's default again. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS payment_routes');
}
