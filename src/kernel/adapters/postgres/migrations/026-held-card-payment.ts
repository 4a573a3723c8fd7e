import type { Knex } from 'knex';

/**
 * The checkout's "save this card" is bound to the payment it was asked with (issue 19.1): a held card
 * (a `vault_tokens` row with `order_id`) now names its `payment_id` too, and only that payment's
 * success saves it, in the transaction that records the success; any other end of the payment
 * deletes it. Rows held before this migration have no payment id: no payment takes them, and they
 * are deleted once expired (10 minutes) like any token. A nullable column and an index on a small
 * table of short-lived rows: nothing is rewritten, and the service may run on while it is added.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE vault_tokens ADD COLUMN payment_id text');
  await knex.raw('CREATE INDEX vault_tokens_payment ON vault_tokens (payment_id) WHERE payment_id IS NOT NULL');
}

/** Reverts 026 (cards held at that moment are dropped: their payments save nothing). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DELETE FROM vault_tokens WHERE payment_id IS NOT NULL');
  await knex.raw('DROP INDEX IF EXISTS vault_tokens_payment');
  await knex.raw('ALTER TABLE vault_tokens DROP COLUMN IF EXISTS payment_id');
}
