import type { Knex } from 'knex';

/**
 * Events are about any subject, not only an order: each names its subject by
 * type and id, and its sequence counts per subject. An event with an order
 * (every order event, a refund's) keeps order_id and the merchant's
 * reference; one without (a payout's) has neither.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.alterTable('events', (t) => {
    t.text('subject_type');
    t.text('subject_id');
  });
  await knex.raw(`UPDATE events SET subject_type = 'order', subject_id = order_id`);
  await knex.raw('ALTER TABLE events ALTER COLUMN subject_type SET NOT NULL, ALTER COLUMN subject_id SET NOT NULL');
  await knex.raw('ALTER TABLE events ALTER COLUMN order_id DROP NOT NULL, ALTER COLUMN reference DROP NOT NULL');
  await knex.raw('ALTER TABLE events DROP CONSTRAINT events_order_id_sequence_unique');
  await knex.raw('ALTER TABLE events ADD CONSTRAINT events_subject_sequence_unique UNIQUE (subject_type, subject_id, sequence)');
  // The order_id filter of the event log, no longer served by the unique index.
  await knex.raw('CREATE INDEX events_by_order ON events (order_id) WHERE order_id IS NOT NULL');
}

/** Reverts 007 (events without an order cannot go back: it refuses when there are any). */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS events_by_order');
  await knex.raw('ALTER TABLE events DROP CONSTRAINT events_subject_sequence_unique');
  await knex.raw('ALTER TABLE events ALTER COLUMN order_id SET NOT NULL, ALTER COLUMN reference SET NOT NULL');
  await knex.raw('ALTER TABLE events ADD CONSTRAINT events_order_id_sequence_unique UNIQUE (order_id, sequence)');
  await knex.schema.alterTable('events', (t) => {
    t.dropColumn('subject_type');
    t.dropColumn('subject_id');
  });
}
