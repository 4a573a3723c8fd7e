import type { Knex } from 'knex';

/**
 * Client secrets: an order created by a merchant's server holds the SHA-256 of its client secret (never the
 * secret) and when it stops being accepted. Orders made before, and those of payment links and subscriptions,
 * have none (null), so no app can pay them with a publishable key.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders ADD COLUMN client_secret_hash text, ADD COLUMN client_secret_expires_at timestamptz');
  await knex.raw(
    'ALTER TABLE orders ADD CONSTRAINT orders_client_secret_complete CHECK ((client_secret_hash IS NULL) = (client_secret_expires_at IS NULL))',
  );
}

/** Reverts 021. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT IF EXISTS orders_client_secret_complete');
  await knex.raw('ALTER TABLE orders DROP COLUMN IF EXISTS client_secret_expires_at, DROP COLUMN IF EXISTS client_secret_hash');
}
