import type { Knex } from 'knex';

/** Checkout: expiry and page token on orders, payment methods on merchants, test cards and payment attempts. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('orders', (t) => {
    t.timestamp('expires_at', { useTz: true });
    t.text('checkout_token');
  });
  await knex.raw(`UPDATE orders SET expires_at = created_at + interval '24 hours', checkout_token = md5(random()::text || id)`);
  await knex.raw('ALTER TABLE orders ALTER COLUMN expires_at SET NOT NULL, ALTER COLUMN checkout_token SET NOT NULL');
  await knex.raw(`CREATE INDEX orders_open_by_expiry ON orders (expires_at) WHERE status IN ('pending', 'failed')`);

  await knex.schema.alterTable('merchants', (t) => {
    t.specificType('payment_methods', 'text[]').notNullable().defaultTo(knex.raw(`'{card,wallet,bank_transfer}'`));
  });

  await knex.schema.createTable('test_cards', (t) => {
    t.text('merchant_id').notNullable().references('merchants.id');
    // SHA-256 of the number: test numbers are never stored in clear either.
    t.text('number_hash').primary();
    t.text('last4').notNullable();
    t.text('brand').notNullable();
    t.text('behaviour').notNullable().checkIn(['approved', 'challenge', 'soft_decline', 'hard_decline']);
    t.timestamp('created_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('payment_attempts', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.id');
    t.text('submission_id');
    t.text('method').notNullable();
    t.text('route').notNullable();
    t.text('status').notNullable().checkIn(['processing', 'requires_authentication', 'succeeded', 'failed']);
    t.text('decline_code');
    t.text('authentication').notNullable();
    t.text('card_brand');
    t.text('card_last4');
    t.boolean('retry').notNullable();
    t.text('processor_ref');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['order_id', 'created_at']);
  });
  // One attempt per submission and route leg: a resubmitted form finds the first.
  await knex.raw('CREATE UNIQUE INDEX payment_attempts_submission ON payment_attempts (order_id, submission_id, retry) WHERE submission_id IS NOT NULL');
  // At most one capture per order, whatever races: the database refuses a second succeeded attempt.
  await knex.raw(`CREATE UNIQUE INDEX payment_attempts_one_success ON payment_attempts (order_id) WHERE status = 'succeeded'`);
}

/** Reverts 002. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('payment_attempts');
  await knex.schema.dropTableIfExists('test_cards');
  await knex.schema.alterTable('merchants', (t) => t.dropColumn('payment_methods'));
  await knex.raw('DROP INDEX IF EXISTS orders_open_by_expiry');
  await knex.schema.alterTable('orders', (t) => {
    t.dropColumn('expires_at');
    t.dropColumn('checkout_token');
  });
}
