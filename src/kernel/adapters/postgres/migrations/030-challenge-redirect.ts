import type { Knex } from 'knex';

/**
 * 3-D Secure as a redirect (issue 21): an attempt waiting for its challenge keeps where the
 * customer is sent (the processor's or issuer's page: url, method, form fields), so a repeated
 * submission or a reload can send them there again.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payment_attempts ADD COLUMN challenge_redirect jsonb');
}

/** Reverts 030. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payment_attempts DROP COLUMN IF EXISTS challenge_redirect');
}
