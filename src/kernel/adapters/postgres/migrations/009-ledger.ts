import type { Knex } from 'knex';

/**
 * The double-entry ledger (docs/money.md). Transactions and their entries are immutable: the
 * database refuses UPDATE, DELETE and TRUNCATE of them. A transaction whose entries do not balance
 * in each currency cannot commit: a deferred constraint trigger checks it at COMMIT, once all its
 * entries are in. Balances per account are kept by a trigger in the same transaction, so no code
 * path can post an entry and forget its balance. Payments captured before this migration are not
 * in the ledger (ledger_start says from when it holds).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('ledger_start', (t) => {
    t.boolean('one').primary().defaultTo(true);
    t.timestamp('started_at', { useTz: true }).notNullable();
  });
  await knex.raw('ALTER TABLE ledger_start ADD CONSTRAINT ledger_start_one_row CHECK (one)');
  await knex.raw('INSERT INTO ledger_start (one, started_at) VALUES (true, now())');

  await knex.schema.createTable('ledger_transactions', (t) => {
    // Derived from the cause (ltx_capture_<payment id>): a second posting of one cause is refused by this key.
    t.text('id').primary();
    t.text('kind').notNullable();
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('order_id');
    t.text('payment_id');
    t.text('reference');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['order_id']);
    t.index(['merchant_id', 'livemode', 'created_at']);
  });

  await knex.schema.createTable('ledger_entries', (t) => {
    t.bigIncrements('id').primary();
    t.text('transaction_id').notNullable().references('ledger_transactions.id');
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('account').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    // Debit positive, credit negative, in minor units.
    t.bigInteger('amount').notNullable();
    t.text('purpose').notNullable();
    t.text('order_id');
    t.text('reference');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['transaction_id']);
    t.index(['merchant_id', 'livemode', 'account', 'currency']);
  });
  await knex.raw(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_amount_nonzero CHECK (amount <> 0)`);
  await knex.raw(`ALTER TABLE ledger_entries ADD CONSTRAINT ledger_entries_account_check CHECK (account IN
    ('merchant_pending', 'merchant_available', 'payouts_in_transit', 'acquirer_clearing', 'fees_earned', 'currency_conversion', 'dispute_reserve', 'payouts_paid'))`);

  await knex.schema.createTable('ledger_balances', (t) => {
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('account').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    // The sum of the account's entries: debit-normal accounts positive, credit-normal ones negative.
    t.bigInteger('balance').notNullable();
    t.primary(['merchant_id', 'livemode', 'account', 'currency']);
  });

  await knex.raw(`
    CREATE FUNCTION ledger_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the ledger is append-only: % of % refused; post a correcting transaction instead', TG_OP, TG_TABLE_NAME
        USING ERRCODE = 'integrity_constraint_violation';
    END $$`);
  for (const table of ['ledger_transactions', 'ledger_entries']) {
    await knex.raw(`CREATE TRIGGER ${table}_append_only BEFORE UPDATE OR DELETE ON ${table} FOR EACH ROW EXECUTE FUNCTION ledger_refuse_change()`);
    await knex.raw(`CREATE TRIGGER ${table}_no_truncate BEFORE TRUNCATE ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_change()`);
  }

  await knex.raw(`
    CREATE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      unbalanced record;
      entries integer;
    BEGIN
      -- Each ledger transaction is checked once, by its last entry: the others only look that one follows.
      IF EXISTS (SELECT 1 FROM ledger_entries WHERE transaction_id = NEW.transaction_id AND id > NEW.id) THEN
        RETURN NULL;
      END IF;
      SELECT count(*) INTO entries FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
      IF entries < 2 THEN
        RAISE EXCEPTION 'ledger transaction % has % entry; it needs at least two', NEW.transaction_id, entries
          USING ERRCODE = 'check_violation';
      END IF;
      SELECT currency, sum(amount) AS difference INTO unbalanced
        FROM ledger_entries WHERE transaction_id = NEW.transaction_id
        GROUP BY currency HAVING sum(amount) <> 0 LIMIT 1;
      IF FOUND THEN
        RAISE EXCEPTION 'ledger transaction % does not balance: debits and credits differ by % in %', NEW.transaction_id, unbalanced.difference, unbalanced.currency
          USING ERRCODE = 'check_violation';
      END IF;
      RETURN NULL;
    END $$`);
  await knex.raw(`
    CREATE CONSTRAINT TRIGGER ledger_entries_balanced AFTER INSERT ON ledger_entries
      DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION ledger_check_balanced()`);

  // Once per statement, over every row it inserted: a settlement run that posts 200,000 entries updates
  // each account's balance once, not 200,000 times (in an order that could deadlock two runs).
  await knex.raw(`
    CREATE FUNCTION ledger_add_to_balance() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO ledger_balances (merchant_id, livemode, account, currency, balance)
        SELECT merchant_id, livemode, account, currency, sum(amount) FROM inserted
        GROUP BY merchant_id, livemode, account, currency
        ORDER BY merchant_id, livemode, account, currency
        ON CONFLICT (merchant_id, livemode, account, currency) DO UPDATE SET balance = ledger_balances.balance + EXCLUDED.balance;
      RETURN NULL;
    END $$`);
  await knex.raw(`CREATE TRIGGER ledger_entries_balance AFTER INSERT ON ledger_entries REFERENCING NEW TABLE AS inserted
    FOR EACH STATEMENT EXECUTE FUNCTION ledger_add_to_balance()`);
}

/** Reverts 009. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('ledger_balances');
  await knex.schema.dropTableIfExists('ledger_entries');
  await knex.schema.dropTableIfExists('ledger_transactions');
  await knex.schema.dropTableIfExists('ledger_start');
  await knex.raw('DROP FUNCTION IF EXISTS ledger_add_to_balance(), ledger_check_balanced(), ledger_refuse_change()');
}
