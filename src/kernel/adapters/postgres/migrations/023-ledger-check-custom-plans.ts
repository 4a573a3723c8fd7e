import type { Knex } from 'knex';

/**
 * The ledger's balance check (a deferred trigger on every entry) plans its lookups for each call.
 * PL/pgSQL keeps a session's plans: after five calls it may settle on a generic plan chosen from the
 * statistics of that moment, and a connection that first ran it on a young ledger kept scanning
 * ledger_entries and ledger_transactions whole, for ever (58,000 sequential scans reading 1.7 billion
 * rows for 10,000 subscription charges; each charge slower than the one before). Custom plans use
 * the indexes on transaction_id and id at any size.
 *
 * A later CREATE OR REPLACE of ledger_check_balanced() drops this setting unless it says
 * `SET plan_cache_mode = force_custom_plan` itself: test/ledger.test.ts checks it is in place.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER FUNCTION ledger_check_balanced() SET plan_cache_mode = force_custom_plan');
}

/** Reverts 023. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('ALTER FUNCTION ledger_check_balanced() RESET plan_cache_mode');
}
