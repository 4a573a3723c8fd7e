import type { Knex } from 'knex';

/**
 * Payouts (settlement batches, docs/money.md). A payout takes a merchant's available money in one
 * mode and currency to the merchant's bank account. Its items are the ledger transactions that
 * brought that money in (a capture, a refund, a dispute, a failed payout returned): each transaction
 * is paid out at most once, which the unique key on payout_items.transaction_id decides. A daily run
 * is claimed once per day in payout_runs, so two workers cannot both make it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('merchants', (t) => {
    // Where live payouts go; test-mode payouts go to the sandbox's test IBAN.
    t.text('payout_iban');
  });
  await knex.raw('ALTER TABLE ledger_transactions ADD COLUMN payout_id text');
  await knex.raw('CREATE INDEX ledger_transactions_payout ON ledger_transactions (payout_id) WHERE payout_id IS NOT NULL');

  await knex.schema.createTable('payouts', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    // The net paid out, and its parts: gross of charges, fees, refunds, disputes, adjustments.
    t.bigInteger('amount').notNullable();
    t.bigInteger('gross').notNullable();
    t.bigInteger('fees').notNullable();
    t.bigInteger('refunds').notNullable();
    t.bigInteger('disputes').notNullable();
    t.bigInteger('adjustments').notNullable();
    t.integer('item_count').notNullable();
    t.integer('order_count').notNullable();
    t.text('status').notNullable();
    t.text('destination').notNullable();
    t.date('arrival_date').notNullable();
    // The run's cut-off: the payout holds what was settled until then.
    t.timestamp('cutoff', { useTz: true }).notNullable();
    t.text('failure_code');
    t.integer('version').notNullable().defaultTo(1);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['merchant_id', 'livemode', 'created_at']);
  });
  await knex.raw(`ALTER TABLE payouts ADD CONSTRAINT payouts_status CHECK (status IN ('pending', 'in_transit', 'paid', 'failed'))`);
  await knex.raw('ALTER TABLE payouts ADD CONSTRAINT payouts_positive CHECK (amount > 0)');
  await knex.raw('ALTER TABLE payouts ADD CONSTRAINT payouts_parts CHECK (amount = gross - fees + refunds + disputes + adjustments)');
  await knex.raw(`CREATE INDEX payouts_moving ON payouts (status, arrival_date) WHERE status IN ('pending', 'in_transit')`);

  await knex.schema.createTable('payout_items', (t) => {
    t.bigIncrements('id').primary();
    t.text('payout_id').notNullable().references('payouts.id');
    // The item's line in its payout (1, 2, …): its public id and the cursor of its pages.
    t.integer('line').notNullable();
    // The ledger transaction the item pays out: at most one payout each.
    t.text('transaction_id').notNullable().unique().references('ledger_transactions.id');
    t.text('type').notNullable();
    t.text('order_id');
    t.text('refund_id');
    t.text('dispute_id');
    t.text('reference');
    t.specificType('currency', 'char(3)').notNullable();
    // What the merchant is owed by the item: gross less its fees (each kind apart) is its net.
    t.bigInteger('gross').notNullable();
    t.bigInteger('percentage_fee').notNullable();
    t.bigInteger('fixed_fee').notNullable();
    t.bigInteger('other_fees').notNullable();
    t.bigInteger('net').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.unique(['payout_id', 'line']);
    t.index(['order_id']);
  });
  await knex.raw('ALTER TABLE payout_items ADD CONSTRAINT payout_items_net CHECK (net = gross - percentage_fee - fixed_fee - other_fees)');

  await knex.schema.createTable('payout_runs', (t) => {
    // The day (UTC) of a scheduled run's cut-off: one run per day, whichever worker claims it.
    t.date('day').primary();
    t.timestamp('cutoff', { useTz: true }).notNullable();
    t.integer('payouts').notNullable();
    t.timestamp('ran_at', { useTz: true }).notNullable();
  });
}

/** Reverts 012. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('payout_runs');
  await knex.schema.dropTableIfExists('payout_items');
  await knex.schema.dropTableIfExists('payouts');
  await knex.raw('DROP INDEX IF EXISTS ledger_transactions_payout');
  await knex.raw('ALTER TABLE ledger_transactions DROP COLUMN IF EXISTS payout_id');
  await knex.schema.alterTable('merchants', (t) => t.dropColumn('payout_iban'));
}
