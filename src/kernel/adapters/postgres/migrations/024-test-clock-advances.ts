import type { Knex } from 'knex';

/**
 * Test clocks advance in the background (docs/recurring.md): the advance request records the target
 * and answers at once; a biller leases the clock (lease_until, taken with SKIP LOCKED) and moves it
 * in bounded steps until it is ready. `version` numbers the clock's events (test_clock.ready).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('test_clocks', (t) => {
    t.timestamp('target_frozen_time', { useTz: true });
    t.timestamp('lease_until', { useTz: true });
    t.integer('version').notNullable().defaultTo(0);
  });
  // An advance a process was running when this migration ran had no target recorded: it stopped where it got.
  await knex.raw(`UPDATE test_clocks SET status = 'ready', advancing_since = NULL WHERE status = 'advancing'`);
  await knex.raw(`ALTER TABLE test_clocks ADD CONSTRAINT test_clocks_target CHECK ((status = 'advancing') = (target_frozen_time IS NOT NULL))`);
  // What the billers look for, and what bounds a merchant's advancing clocks.
  await knex.raw(`CREATE INDEX test_clocks_advancing ON test_clocks (lease_until NULLS FIRST) WHERE status = 'advancing'`);
  await knex.raw(`CREATE INDEX test_clocks_advancing_merchant ON test_clocks (merchant_id) WHERE status = 'advancing'`);
}

/** Reverts 024. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS test_clocks_advancing_merchant');
  await knex.raw('DROP INDEX IF EXISTS test_clocks_advancing');
  await knex.raw('ALTER TABLE test_clocks DROP CONSTRAINT IF EXISTS test_clocks_target');
  await knex.schema.alterTable('test_clocks', (t) => {
    t.dropColumn('version');
    t.dropColumn('lease_until');
    t.dropColumn('target_frozen_time');
  });
}
