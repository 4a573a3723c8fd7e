import type { Knex } from 'knex';

/**
 * A posted ledger transaction is sealed: its entries all come from the one database transaction
 * that inserted it. The deferred balance check (009) already reads every entry of a transaction
 * once, at COMMIT; it now also refuses entries added to a transaction that an earlier database
 * transaction posted, even when they balance among themselves (docs/money.md, "What the database
 * guarantees"). It compares the rows' xmin, so the transaction row and all its entries must be
 * written in one database transaction and at one savepoint level, which is how the service posts.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      unbalanced record;
      entries integer;
      foreign_entries integer;
      mine xid;
    BEGIN
      -- Each ledger transaction is checked once, by its last entry: the others only look that one follows.
      IF EXISTS (SELECT 1 FROM ledger_entries WHERE transaction_id = NEW.transaction_id AND id > NEW.id) THEN
        RETURN NULL;
      END IF;
      SELECT xmin INTO mine FROM ledger_entries WHERE id = NEW.id;
      SELECT count(*), count(*) FILTER (WHERE xmin <> mine) INTO entries, foreign_entries
        FROM ledger_entries WHERE transaction_id = NEW.transaction_id;
      IF foreign_entries > 0 OR EXISTS (SELECT 1 FROM ledger_transactions WHERE id = NEW.transaction_id AND xmin <> mine) THEN
        RAISE EXCEPTION 'ledger transaction % is sealed: its entries were posted with it by another database transaction; post a correcting transaction instead', NEW.transaction_id
          USING ERRCODE = 'integrity_constraint_violation';
      END IF;
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
}

/** Reverts 015 to 009's check. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw(`
    CREATE OR REPLACE FUNCTION ledger_check_balanced() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
      unbalanced record;
      entries integer;
    BEGIN
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
}
