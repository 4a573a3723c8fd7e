import type { Knex } from 'knex';

/**
 * Each account's balance is kept in 16 rows (shards) instead of one. A merchant's payments all post to
 * the same few accounts, so a single balance row was a lock every concurrent capture waited on from its
 * ledger insert to its COMMIT: at 50 concurrent payments of one merchant, an insert into ledger_entries
 * waited 138 ms on average. A transaction now adds to the shard its transaction id picks, so all rows it
 * touches are on one shard (the lock order within it is unchanged) and concurrent captures rarely meet.
 * An account's balance is the sum of its shards: read it through the view ledger_account_balances.
 */
export const BALANCE_SHARDS = 16;

export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE ledger_balances ADD COLUMN shard smallint NOT NULL DEFAULT 0');
  await knex.raw(`ALTER TABLE ledger_balances ADD CONSTRAINT ledger_balances_shard_range CHECK (shard >= 0 AND shard < ${BALANCE_SHARDS})`);
  await knex.raw('ALTER TABLE ledger_balances DROP CONSTRAINT ledger_balances_pkey');
  await knex.raw('ALTER TABLE ledger_balances ADD PRIMARY KEY (merchant_id, livemode, account, currency, shard)');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ledger_add_to_balance() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ledger_balances (merchant_id, livemode, account, currency, shard, balance)
        SELECT merchant_id, livemode, account, currency, (txid_current() % ${BALANCE_SHARDS})::smallint, sum(amount) FROM inserted
        GROUP BY merchant_id, livemode, account, currency
        ORDER BY merchant_id, livemode, account, currency
        ON CONFLICT (merchant_id, livemode, account, currency, shard) DO UPDATE SET balance = ledger_balances.balance + EXCLUDED.balance;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE VIEW ledger_account_balances AS
      SELECT merchant_id, livemode, account, currency, sum(balance)::bigint AS balance
      FROM ledger_balances GROUP BY merchant_id, livemode, account, currency`);
}

/** Reverts 022: the shards of each account are folded back into one row. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP VIEW IF EXISTS ledger_account_balances');
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ledger_add_to_balance() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ledger_balances (merchant_id, livemode, account, currency, balance)
        SELECT merchant_id, livemode, account, currency, sum(amount) FROM inserted
        GROUP BY merchant_id, livemode, account, currency
        ORDER BY merchant_id, livemode, account, currency
        ON CONFLICT (merchant_id, livemode, account, currency) DO UPDATE SET balance = ledger_balances.balance + EXCLUDED.balance;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    WITH folded AS (
      DELETE FROM ledger_balances WHERE shard <> 0 RETURNING merchant_id, livemode, account, currency, balance
    ), summed AS (
      SELECT merchant_id, livemode, account, currency, sum(balance) AS balance FROM folded GROUP BY 1, 2, 3, 4
    )
    INSERT INTO ledger_balances (merchant_id, livemode, account, currency, shard, balance)
      SELECT merchant_id, livemode, account, currency, 0, balance FROM summed
      ON CONFLICT (merchant_id, livemode, account, currency, shard) DO UPDATE SET balance = ledger_balances.balance + EXCLUDED.balance`);
  await knex.raw('ALTER TABLE ledger_balances DROP CONSTRAINT ledger_balances_pkey');
  await knex.raw('ALTER TABLE ledger_balances ADD PRIMARY KEY (merchant_id, livemode, account, currency)');
  await knex.raw('ALTER TABLE ledger_balances DROP CONSTRAINT ledger_balances_shard_range');
  await knex.raw('ALTER TABLE ledger_balances DROP COLUMN shard');
}
