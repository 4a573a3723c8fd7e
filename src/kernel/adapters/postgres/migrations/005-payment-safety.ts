import type { Knex } from 'knex';

/**
 * Payment safety: attempts that were canceled or reversed, the 3-D Secure
 * test code kept with its attempt (any instance can finish a challenge), the
 * merchant and client address on each attempt for card-testing limits, API
 * rate-limit buckets shared by every instance, and idempotency records for
 * any operation (a claim in progress, then its response).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_status_check');
  await knex.raw(`ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_status_check
    CHECK (status IN ('processing', 'requires_authentication', 'succeeded', 'failed', 'canceled', 'reversal_pending', 'reversed'))`);
  await knex.schema.alterTable('payment_attempts', (t) => {
    // Why an attempt was canceled or reversed (order_paid, order_expired, attempt_abandoned).
    t.text('cancellation_reason');
    // The code the simulated issuer accepts (test mode only); the page translates the hint around it.
    t.text('challenge_test_code');
    t.text('merchant_id');
    t.boolean('livemode');
    // The customer's address as the gateway saw it, for velocity limits; null for server-side payments.
    t.text('client_address');
  });
  await knex.raw('UPDATE payment_attempts a SET merchant_id = o.merchant_id, livemode = o.livemode FROM orders o WHERE o.id = a.order_id');
  await knex.raw('ALTER TABLE payment_attempts ALTER COLUMN merchant_id SET NOT NULL, ALTER COLUMN livemode SET NOT NULL');
  await knex.raw('CREATE INDEX payment_attempts_merchant_recent ON payment_attempts (merchant_id, livemode, created_at)');
  await knex.raw('CREATE INDEX payment_attempts_client_recent ON payment_attempts (client_address, created_at) WHERE client_address IS NOT NULL');
  // The sweep finds attempts a crashed process left behind, and reversals still to make.
  await knex.raw(`CREATE INDEX payment_attempts_unsettled ON payment_attempts (updated_at) WHERE status IN ('processing', 'reversal_pending')`);

  await knex.schema.createTable('rate_limit_buckets', (t) => {
    t.text('key').primary();
    t.double('tokens').notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  // Takes up to `want` whole tokens from a bucket refilled at `rate` per second up to `burst`,
  // in one statement under the row's lock: every instance of the service shares the bucket.
  await knex.raw(`
    CREATE FUNCTION rate_limit_take(p_key text, p_rate double precision, p_burst double precision, p_want integer,
                                    OUT granted integer, OUT remaining double precision)
    LANGUAGE plpgsql AS $$
    DECLARE
      available double precision;
    BEGIN
      INSERT INTO rate_limit_buckets AS b (key, tokens, updated_at) VALUES (p_key, p_burst, clock_timestamp())
      ON CONFLICT (key) DO UPDATE
        SET tokens = LEAST(p_burst, b.tokens + GREATEST(0, EXTRACT(EPOCH FROM clock_timestamp() - b.updated_at)) * p_rate),
            updated_at = clock_timestamp()
      RETURNING tokens INTO available;
      granted := LEAST(p_want, floor(available))::integer;
      remaining := available - granted;
      UPDATE rate_limit_buckets SET tokens = remaining WHERE key = p_key;
    END $$`);
  await knex.raw('CREATE INDEX rate_limit_buckets_stale ON rate_limit_buckets (updated_at)');

  await knex.schema.alterTable('idempotency_keys', (t) => {
    // 'completed' rows hold the response; 'in_progress' rows are claims whose work has not finished.
    t.text('status').notNullable().defaultTo('completed');
    t.integer('response_status');
  });
  await knex.raw('ALTER TABLE idempotency_keys ALTER COLUMN response DROP NOT NULL, ALTER COLUMN resource_id DROP NOT NULL');
}

/** Reverts 005. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`DELETE FROM idempotency_keys WHERE status <> 'completed' OR response IS NULL`);
  await knex.raw('ALTER TABLE idempotency_keys ALTER COLUMN response SET NOT NULL');
  await knex.schema.alterTable('idempotency_keys', (t) => {
    t.dropColumn('status');
    t.dropColumn('response_status');
  });
  await knex.raw('DROP FUNCTION IF EXISTS rate_limit_take(text, double precision, double precision, integer)');
  await knex.schema.dropTableIfExists('rate_limit_buckets');
  await knex.raw('DROP INDEX IF EXISTS payment_attempts_unsettled');
  await knex.raw('DROP INDEX IF EXISTS payment_attempts_client_recent');
  await knex.raw('DROP INDEX IF EXISTS payment_attempts_merchant_recent');
  await knex.raw(`UPDATE payment_attempts SET status = 'failed' WHERE status IN ('canceled', 'reversal_pending', 'reversed')`);
  await knex.schema.alterTable('payment_attempts', (t) => {
    for (const c of ['cancellation_reason', 'challenge_test_code', 'merchant_id', 'livemode', 'client_address']) t.dropColumn(c);
  });
  await knex.raw('ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_status_check');
  await knex.raw(`ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_status_check CHECK (status IN ('processing', 'requires_authentication', 'succeeded', 'failed'))`);
}
