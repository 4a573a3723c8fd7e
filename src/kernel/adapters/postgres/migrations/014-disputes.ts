import type { Knex } from 'knex';

/**
 * Disputes (chargebacks) and the evidence a merchant attaches to an order. What an order's open
 * and lost disputes hold sits on the order (amount_disputed), and a constraint keeps refunds and
 * disputes together within the order's amount: however the code races, the database refuses to
 * take back more than was captured. Ledger transactions name their dispute. Sandboxes get a fifth
 * test card, paid normally and disputed a few seconds later.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('orders', (t) => {
    t.bigInteger('amount_disputed').notNullable().defaultTo(0);
  });
  // The refunds' rule (010), widened: refunds, pending refunds and open or lost disputes together.
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_refunds_within_amount');
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_refunds_within_amount
    CHECK (amount_refunded >= 0 AND amount_refund_pending >= 0 AND amount_disputed >= 0 AND amount_refunded + amount_refund_pending + amount_disputed <= coalesce(amount_captured, amount))`);

  await knex.schema.createTable('order_evidence', (t) => {
    t.text('order_id').primary().references('orders.id');
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('customer_email');
    t.text('customer_name');
    t.text('shipping_carrier');
    t.text('tracking_number');
    t.timestamp('delivered_at', { useTz: true });
    t.text('product_description');
    t.text('notes');
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });

  await knex.schema.createTable('disputes', (t) => {
    t.text('id').primary();
    t.text('order_id').notNullable().references('orders.id');
    t.text('payment_id').notNullable().references('payments.id');
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('reference').notNullable();
    t.bigInteger('amount').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.text('reason').notNullable();
    t.text('status').notNullable();
    t.timestamp('evidence_due_by', { useTz: true }).notNullable();
    // The order's evidence as submitted (merchant's and service's), once submitted.
    t.jsonb('submitted_evidence');
    t.integer('submission_count').notNullable().defaultTo(0);
    // What the merchant's balance gave up, in the settlement currency, and the fee.
    t.bigInteger('withdrawn_amount').notNullable();
    t.specificType('withdrawn_currency', 'char(3)').notNullable();
    t.text('withdrawn_from').notNullable();
    t.bigInteger('fee_amount').notNullable();
    t.specificType('fee_currency', 'char(3)').notNullable();
    t.text('source').notNullable();
    t.integer('version').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('closed_at', { useTz: true });
    t.index(['order_id', 'created_at']);
    t.index(['merchant_id', 'livemode', 'created_at']);
  });
  await knex.raw('ALTER TABLE disputes ADD CONSTRAINT disputes_amount_positive CHECK (amount > 0 AND withdrawn_amount > 0 AND fee_amount >= 0)');
  await knex.raw(`ALTER TABLE disputes ADD CONSTRAINT disputes_status_check CHECK (status IN ('needs_response', 'under_review', 'won', 'lost'))`);
  await knex.raw(`ALTER TABLE disputes ADD CONSTRAINT disputes_reason_check CHECK (reason IN
    ('fraudulent', 'product_not_received', 'duplicate', 'subscription_canceled', 'product_unacceptable', 'credit_not_processed', 'unrecognized', 'general'))`);
  await knex.raw(`ALTER TABLE disputes ADD CONSTRAINT disputes_source_check CHECK (source IN ('test_helper', 'test_card'))`);
  await knex.raw(`ALTER TABLE disputes ADD CONSTRAINT disputes_withdrawn_from_check CHECK (withdrawn_from IN ('merchant_pending', 'merchant_available'))`);
  // The dispute test card disputes its order once, whichever sweeper gets there first.
  await knex.raw(`CREATE UNIQUE INDEX disputes_one_per_test_card_order ON disputes (order_id) WHERE source = 'test_card'`);
  // What the sweeper looks for: open disputes.
  await knex.raw(`CREATE INDEX disputes_open ON disputes (evidence_due_by) WHERE status IN ('needs_response', 'under_review')`);

  await knex.raw('ALTER TABLE ledger_transactions ADD COLUMN dispute_id text');
  await knex.raw('CREATE INDEX ledger_transactions_dispute ON ledger_transactions (dispute_id) WHERE dispute_id IS NOT NULL');

  await knex.raw(`DO $$
    DECLARE c record;
    BEGIN
      FOR c IN SELECT conname FROM pg_constraint WHERE conrelid = 'test_cards'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%behaviour%' LOOP
        EXECUTE format('ALTER TABLE test_cards DROP CONSTRAINT %I', c.conname);
      END LOOP;
    END $$`);
  await knex.raw(`ALTER TABLE test_cards ADD CONSTRAINT test_cards_behaviour_check CHECK (behaviour IN ('approved', 'challenge', 'soft_decline', 'hard_decline', 'dispute'))`);
}

/** Reverts 014 (refuses while a dispute test card exists). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE test_cards DROP CONSTRAINT test_cards_behaviour_check');
  await knex.raw(`ALTER TABLE test_cards ADD CONSTRAINT test_cards_behaviour_check CHECK (behaviour IN ('approved', 'challenge', 'soft_decline', 'hard_decline'))`);
  await knex.raw('DROP INDEX IF EXISTS ledger_transactions_dispute');
  await knex.raw('ALTER TABLE ledger_transactions DROP COLUMN IF EXISTS dispute_id');
  await knex.schema.dropTableIfExists('disputes');
  await knex.schema.dropTableIfExists('order_evidence');
  await knex.raw('ALTER TABLE orders DROP CONSTRAINT orders_refunds_within_amount');
  await knex.raw(`ALTER TABLE orders ADD CONSTRAINT orders_refunds_within_amount
    CHECK (amount_refunded >= 0 AND amount_refund_pending >= 0 AND amount_refunded + amount_refund_pending <= coalesce(amount_captured, amount))`);
  await knex.schema.alterTable('orders', (t) => t.dropColumn('amount_disputed'));
}
