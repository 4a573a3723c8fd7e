import type { Knex } from 'knex';

/**
 * Subscriptions and test clocks (docs/recurring.md). A subscription charges a vaulted card on a
 * schedule; each cycle is an order of its own, made once: subscription_cycles' key (subscription,
 * cycle) decides, with a unique order per cycle. A test clock is test mode's own time; customers
 * attached to one bill on it.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('test_clocks', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('name').notNullable();
    t.timestamp('frozen_time', { useTz: true }).notNullable();
    t.text('status').notNullable();
    // When the running advance began: one left by a stopped process is taken over after a while.
    t.timestamp('advancing_since', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('deleted_at', { useTz: true });
    t.index(['merchant_id', 'created_at']);
  });
  await knex.raw(`ALTER TABLE test_clocks ADD CONSTRAINT test_clocks_status CHECK (status IN ('ready', 'advancing'))`);
  await knex.raw('ALTER TABLE customers ADD COLUMN test_clock_id text REFERENCES test_clocks (id)');

  await knex.schema.createTable('subscriptions', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    t.text('customer_id').notNullable().references('customers.id');
    t.text('card_id').notNullable();
    t.bigInteger('amount').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.text('reference').notNullable();
    t.jsonb('line_items').notNullable();
    t.text('interval').notNullable();
    t.integer('interval_count').notNullable();
    t.timestamp('start_date', { useTz: true }).notNullable();
    t.integer('trial_days').notNullable();
    t.integer('cycles');
    t.text('after_failed_retries').notNullable();
    t.text('status').notNullable();
    t.integer('next_cycle').notNullable();
    t.timestamp('next_charge_at', { useTz: true });
    t.integer('retries').notNullable();
    t.timestamp('first_failure_at', { useTz: true });
    t.boolean('cancel_at_period_end').notNullable();
    t.timestamp('canceled_at', { useTz: true });
    t.text('cancellation_reason');
    t.text('test_clock_id').references('test_clocks.id');
    // A biller's lease on a due subscription: several billers take different ones.
    t.timestamp('lease_until', { useTz: true });
    t.integer('version').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['merchant_id', 'livemode', 'created_at']);
    t.index(['customer_id']);
  });
  await knex.raw(`ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_status CHECK (status IN ('trialing', 'active', 'past_due', 'unpaid', 'paused', 'canceled'))`);
  await knex.raw(`ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_interval CHECK (interval IN ('day', 'week', 'month', 'year') AND interval_count > 0)`);
  await knex.raw('ALTER TABLE subscriptions ADD CONSTRAINT subscriptions_amount_positive CHECK (amount > 0)');
  // What the scheduler looks for: subscriptions on the real time with a charge due.
  await knex.raw(`CREATE INDEX subscriptions_due ON subscriptions (next_charge_at) WHERE test_clock_id IS NULL AND status IN ('trialing', 'active', 'past_due')`);
  await knex.raw(`CREATE INDEX subscriptions_due_on_clock ON subscriptions (test_clock_id, next_charge_at) WHERE test_clock_id IS NOT NULL AND status IN ('trialing', 'active', 'past_due')`);

  await knex.schema.createTable('subscription_cycles', (t) => {
    t.text('subscription_id').notNullable().references('subscriptions.id');
    t.integer('cycle').notNullable();
    t.text('order_id').notNullable().unique().references('orders.id');
    // Charges started on the cycle's order (the first, then the retries), and those whose outcome the subscription has taken in.
    t.integer('charges_started').notNullable().defaultTo(0);
    t.integer('charges_recorded').notNullable().defaultTo(0);
    // When the latest charge was counted (the real time): a count with no payment after it is a charge that never began.
    t.timestamp('charge_started_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['subscription_id', 'cycle']);
  });

  await knex.schema.alterTable('orders', (t) => {
    t.text('subscription_id');
    t.integer('subscription_cycle');
  });
}

/** Reverts 019. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('orders', (t) => {
    t.dropColumn('subscription_cycle');
    t.dropColumn('subscription_id');
  });
  await knex.schema.dropTableIfExists('subscription_cycles');
  await knex.schema.dropTableIfExists('subscriptions');
  await knex.raw('ALTER TABLE customers DROP COLUMN IF EXISTS test_clock_id');
  await knex.schema.dropTableIfExists('test_clocks');
}
