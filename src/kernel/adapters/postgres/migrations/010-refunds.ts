import type { Knex } from 'knex';

/**
 * Refunds of paid orders. What an order has refunded (succeeded) and reserved (pending refunds)
 * sits on the order, and a constraint keeps their sum within the order's amount: however the code
 * races, the database refuses to refund more than was captured.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('orders', (t) => {
    t.bigInteger('amount_refunded').notNullable().defaultTo(0);
    t.bigInteger('amount_refund_pending').notNullable().defaultTo(0);
  });
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_refunds_within_amount
    CHECK (amount_refunded >= 0 AND amount_refund_pending >= 0 AND amount_refunded + amount_refund_pending <= amount)`);

  await knex.schema.createTable('refunds', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.id');
    t.text('payment_id').notNullable().references('payments.id');
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('reference').notNullable();
    t.bigInteger('amount').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.text('reason').notNullable();
    t.text('note').notNullable();
    t.text('status').notNullable();
    t.text('processor_ref');
    t.text('failure_code');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['order_id', 'created_at']);
  });
  await knex.raw('ALTER TABLE refunds ADD CONSTRAINT refunds_amount_positive CHECK (amount > 0)');
  await knex.raw(`ALTER TABLE refunds ADD CONSTRAINT refunds_status_check CHECK (status IN ('pending', 'succeeded', 'failed', 'canceled'))`);
  await knex.raw(`ALTER TABLE refunds ADD CONSTRAINT refunds_reason_check
    CHECK (reason IN ('requested_by_customer', 'duplicate', 'fraudulent', 'product_not_received', 'other'))`);
  await knex.raw(`ALTER TABLE ledger_transactions ADD COLUMN refund_id text`);
}

/** Reverts 010. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ledger_transactions DROP COLUMN IF EXISTS refund_id');
  await knex.schema.dropTableIfExists('refunds');
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT IF EXISTS orders_refunds_within_amount');
  await knex.schema.alterTable('orders', (t) => {
    t.dropColumn('amount_refunded');
    t.dropColumn('amount_refund_pending');
  });
}
