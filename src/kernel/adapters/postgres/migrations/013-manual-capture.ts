import type { Knex } from 'knex';

const ATTEMPT_STATUSES = `'processing', 'requires_authentication', 'succeeded', 'failed', 'canceled', 'reversal_pending', 'reversed'`;

/**
 * Manual capture: an order's capture method, what it captured (a manual capture may take less
 * than the amount, and refunds are bounded by what was captured, in the database too), and when an
 * authorized order's authorization is released; payments and attempts may be "authorized" (held
 * for a capture). Paid orders of before are backfilled as captured in full.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('orders', (t) => {
    t.text('capture_method').notNullable().defaultTo('automatic');
    t.bigInteger('amount_captured');
    t.timestamp('authorization_expires_at', { useTz: true });
  });
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_capture_method_check CHECK (capture_method IN ('automatic', 'manual'))`);
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_amount_captured_within_amount CHECK (amount_captured IS NULL OR (amount_captured > 0 AND amount_captured <= amount))`);
  await knex.raw(`UPDATE orders SET amount_captured = amount WHERE status IN ('paid', 'partially_refunded', 'refunded') OR (status = 'voided' AND method IS NOT NULL)`);
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_refunds_within_amount');
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_refunds_within_amount
    CHECK (amount_refunded >= 0 AND amount_refund_pending >= 0 AND amount_refunded + amount_refund_pending <= coalesce(amount_captured, amount))`);
  // What the sweeper looks for: authorizations to release.
  await knex.raw(`CREATE INDEX orders_authorized_by_expiry ON orders (authorization_expires_at) WHERE status = 'authorized'`);
  for (const table of ['payments', 'payment_attempts']) {
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_status_check`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_status_check CHECK (status IN (${ATTEMPT_STATUSES}, 'authorized'))`);
  }
}

/** Reverts 013 (authorized payments become canceled, authorized orders voided). */
export async function down(knex: Knex): Promise<void> {
  for (const table of ['payments', 'payment_attempts']) {
    await knex.raw(`UPDATE ${table} SET status = 'canceled' WHERE status = 'authorized'`);
    await knex.raw(`ALTER TABLE ${table} DROP CONSTRAINT ${table}_status_check`);
    await knex.raw(`ALTER TABLE ${table} ADD CONSTRAINT ${table}_status_check CHECK (status IN (${ATTEMPT_STATUSES}))`);
  }
  await knex.raw(`UPDATE orders SET status = 'voided' WHERE status = 'authorized'`);
  await knex.raw('DROP INDEX IF EXISTS orders_authorized_by_expiry');
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_refunds_within_amount');
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_refunds_within_amount
    CHECK (amount_refunded >= 0 AND amount_refund_pending >= 0 AND amount_refunded + amount_refund_pending <= amount)`);
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_amount_captured_within_amount');
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_capture_method_check');
  await knex.schema.alterTable('orders', (t) => {
    t.dropColumn('authorization_expires_at');
    t.dropColumn('amount_captured');
    t.dropColumn('capture_method');
  });
}
