import type { Knex } from 'knex';

/**
 * Payments as entities: one row per way the customer tried to pay an order
 * (a submission with its legs, a transfer), with its capture; each attempt
 * names its payment. Existing attempts are grouped into payments: the legs
 * of one submission together, each transfer alone.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('payments', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.id');
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('method').notNullable();
    t.bigInteger('amount').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.text('status').notNullable();
    t.text('submission_id');
    t.text('client_address');
    // The capture: what a refund or a reversal names.
    t.text('capture_ref');
    t.bigInteger('captured_amount');
    t.timestamp('captured_at', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.index(['order_id', 'created_at']);
    t.index(['merchant_id', 'livemode', 'created_at']);
  });
  await knex.raw(`ALTER TABLE payments ADD CONSTRAINT payments_status_check
    CHECK (status IN ('processing', 'requires_authentication', 'succeeded', 'failed', 'canceled', 'reversal_pending', 'reversed'))`);
  await knex.raw('ALTER TABLE payments ADD CONSTRAINT payments_amount_positive CHECK (amount > 0)');
  // At most one payment per order and submission: a resubmitted form finds the first.
  await knex.raw('CREATE UNIQUE INDEX payments_submission ON payments (order_id, submission_id) WHERE submission_id IS NOT NULL');
  // At most one payment per order that succeeded, whatever races.
  await knex.raw(`CREATE UNIQUE INDEX payments_one_success ON payments (order_id) WHERE status = 'succeeded'`);

  await knex.schema.alterTable('payment_attempts', (t) => {
    t.text('payment_id').references('payments.id');
  });
  // Existing attempts: one payment per submission (its legs), one per transfer. The payment's id is made from the
  // first leg's, so the grouping is stable; its status and capture are those of its latest leg.
  await knex.raw(`
    WITH legs AS (
      SELECT a.*, first_value(a.id) OVER w AS first_id, last_value(a.id) OVER w AS last_id
      FROM payment_attempts a
      WINDOW w AS (PARTITION BY a.order_id, coalesce(a.submission_id, a.id) ORDER BY a.retry, a.created_at, a.id
                   ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING)
    )
    INSERT INTO payments (id, order_id, merchant_id, livemode, method, amount, currency, status, submission_id, client_address,
                          capture_ref, captured_amount, captured_at, created_at, updated_at)
    SELECT 'pay_' || substr(l.first_id, 5), l.order_id, l.merchant_id, l.livemode, l.method, o.amount, o.currency, l.status,
           l.submission_id, l.client_address,
           CASE WHEN l.status = 'succeeded' THEN l.processor_ref END,
           CASE WHEN l.status = 'succeeded' THEN o.amount END,
           CASE WHEN l.status = 'succeeded' THEN l.updated_at END,
           f.created_at, l.updated_at
    FROM legs l JOIN orders o ON o.id = l.order_id JOIN payment_attempts f ON f.id = l.first_id
    WHERE l.id = l.last_id`);
  await knex.raw(`
    UPDATE payment_attempts a SET payment_id = 'pay_' || substr(g.first_id, 5)
    FROM (SELECT id, first_value(id) OVER (PARTITION BY order_id, coalesce(submission_id, id) ORDER BY retry, created_at, id) AS first_id FROM payment_attempts) g
    WHERE g.id = a.id`);
  await knex.raw('ALTER TABLE payment_attempts ALTER COLUMN payment_id SET NOT NULL');
  await knex.raw('CREATE INDEX payment_attempts_payment ON payment_attempts (payment_id)');
}

/** Reverts 008. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS payment_attempts_payment');
  await knex.schema.alterTable('payment_attempts', (t) => t.dropColumn('payment_id'));
  await knex.schema.dropTableIfExists('payments');
}
