import type { Knex } from 'knex';

/**
 * A capture asked of the acquirer and not yet recorded. POST /v1/orders/:id/capture commits its
 * request first (under the order's lock), then asks the acquirer, then records the capture: a process
 * that stops in between leaves the request, and the sweeper asks the acquirer again (a capture of
 * one authorization is idempotent there) and records it. While a request stands, the order can be
 * neither captured again, voided, nor released.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('capture_requests', (t) => {
    t.text('order_id').primary().references('orders.id');
    t.text('payment_id').notNullable();
    t.bigInteger('amount').notNullable();
    t.timestamp('requested_at', { useTz: true }).notNullable();
    t.index(['requested_at']);
  });
  await knex.raw('ALTER TABLE capture_requests ADD CONSTRAINT capture_requests_amount_positive CHECK (amount > 0)');
}

/** Reverts 016. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('capture_requests');
}
