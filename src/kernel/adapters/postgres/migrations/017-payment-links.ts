import type { Knex } from 'knex';

/**
 * Payment links, and the link that created an order. A link's row is what serialises the payments
 * of its orders: the transaction that starts a payment on a link's order locks it, so a single-use
 * link's check ("no other order of mine is paid or being paid") cannot be passed by two payers at
 * once. completed_payments counts the paid orders, raised in the transaction that records the
 * payment; the check constraint is the last line: a single-use link can never record a second one.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payment_links', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    t.text('suffix').notNullable().unique();
    t.text('url').notNullable();
    t.text('type').notNullable();
    t.bigInteger('amount').notNullable();
    t.text('currency').notNullable();
    t.text('reference').notNullable();
    t.jsonb('line_items').notNullable();
    t.text('return_url');
    t.timestamp('expires_at', { useTz: true });
    t.timestamp('deactivated_at', { useTz: true });
    t.integer('completed_payments').notNullable().defaultTo(0);
    t.integer('version').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['merchant_id', 'livemode', 'created_at', 'id']);
  });
  await knex.raw(`ALTER TABLE payment_links ADD CONSTRAINT payment_links_type CHECK (type IN ('single_use', 'collecting'))`);
  await knex.raw(`ALTER TABLE payment_links ADD CONSTRAINT payment_links_single_use_once CHECK (type <> 'single_use' OR completed_payments <= 1)`);
  await knex.raw('ALTER TABLE payment_links ADD CONSTRAINT payment_links_completed_not_negative CHECK (completed_payments >= 0)');
  await knex.schema.alterTable('orders', (t) => {
    t.text('payment_link_id').references('payment_links.id');
  });
  await knex.raw('CREATE INDEX orders_payment_link ON orders (payment_link_id, created_at, id) WHERE payment_link_id IS NOT NULL');
}

/** Reverts 017. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS orders_payment_link');
  await knex.schema.alterTable('orders', (t) => {
    t.dropColumn('payment_link_id');
  });
  await knex.schema.dropTableIfExists('payment_links');
}
