import type { Knex } from 'knex';

/**
 * Settlement: captured money waits in merchant_pending for the merchant's settlement delay
 * (default 2 days), then moves to merchant_available. An order is settled once (settled_at), by
 * one ledger transaction ltx_settle_<order id>.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('merchants', (t) => {
    t.integer('settlement_delay_days').notNullable().defaultTo(2);
  });
  await knex.raw('ALTER TABLE merchants ADD CONSTRAINT merchants_settlement_delay CHECK (settlement_delay_days BETWEEN 0 AND 30)');
  await knex.schema.alterTable('orders', (t) => {
    t.timestamp('settled_at', { useTz: true });
  });
  // What the settlement run looks for: paid orders not yet settled.
  await knex.raw(`CREATE INDEX orders_unsettled ON orders (merchant_id, livemode) WHERE settled_at IS NULL AND status IN ('paid', 'partially_refunded', 'refunded')`);
}

/** Reverts 011. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS orders_unsettled');
  await knex.schema.alterTable('orders', (t) => t.dropColumn('settled_at'));
  await knex.raw('ALTER TABLE merchants DROP CONSTRAINT IF EXISTS merchants_settlement_delay');
  await knex.schema.alterTable('merchants', (t) => t.dropColumn('settlement_delay_days'));
}
