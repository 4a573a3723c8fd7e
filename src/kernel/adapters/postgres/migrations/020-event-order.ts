import type { Knex } from 'knex';

/**
 * Events in the order they were written: events written at the same instant (a test clock's step
 * writes several at its one time) were ordered by their random ids. `seq` numbers them as they are
 * inserted; the outbox relay and the event log order by (created_at, seq).
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('ALTER TABLE events ADD COLUMN seq bigserial');
  await knex.raw('DROP INDEX IF EXISTS events_unpublished');
  await knex.raw('CREATE INDEX events_unpublished ON events (created_at, seq) WHERE published_at IS NULL');
  await knex.raw('DROP INDEX IF EXISTS events_list');
  await knex.raw('CREATE INDEX events_list ON events (merchant_id, livemode, created_at DESC, seq DESC)');
}

/** Reverts 020. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS events_list');
  await knex.raw('CREATE INDEX events_list ON events (merchant_id, livemode, created_at DESC, id DESC)');
  await knex.raw('DROP INDEX IF EXISTS events_unpublished');
  await knex.raw('CREATE INDEX events_unpublished ON events (created_at, id) WHERE published_at IS NULL');
  await knex.raw('ALTER TABLE events DROP COLUMN IF EXISTS seq');
}
