import type { Knex } from 'knex';

/**
 * The event stream in Postgres, for installations without NATS (no NATS_URL; docs/architecture.md,
 * "Events without NATS"). The relay gives each committed event its place in the stream,
 * `stream_seq`, while it marks the event published; it assigns them under one transaction-level
 * advisory lock, so positions become visible in the order they were given, and a consumer that has
 * seen position n has seen every position below it. (`seq`, numbered at insert, cannot serve:
 * transactions commit out of the order they took their numbers in.) Events published to NATS keep
 * `stream_seq` null.
 *
 * `event_consumers` holds each durable consumer's position (the last stream position it took in);
 * `event_consumer_pending` the events it took in and has not settled: handed to a process until
 * `due_at` (the ack wait), or waiting until `due_at` to be handed over again (a retry). A handled or
 * rejected event's row is deleted, so the table holds only the events in hand.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.raw('CREATE SEQUENCE event_stream_seq AS bigint');
  await knex.raw('ALTER TABLE events ADD COLUMN stream_seq bigint');
  await knex.raw('CREATE UNIQUE INDEX events_stream ON events (stream_seq) WHERE stream_seq IS NOT NULL');
  await knex.raw(`
    CREATE TABLE event_consumers (
      name text PRIMARY KEY,
      position bigint NOT NULL DEFAULT 0,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  await knex.raw(`
    CREATE TABLE event_consumer_pending (
      consumer text NOT NULL REFERENCES event_consumers (name) ON DELETE CASCADE,
      stream_seq bigint NOT NULL,
      deliveries integer NOT NULL,
      due_at timestamptz NOT NULL,
      PRIMARY KEY (consumer, stream_seq)
    )`);
  await knex.raw('CREATE INDEX event_consumer_pending_due ON event_consumer_pending (consumer, due_at)');
}

/** Reverts 028. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP TABLE IF EXISTS event_consumer_pending');
  await knex.raw('DROP TABLE IF EXISTS event_consumers');
  await knex.raw('DROP INDEX IF EXISTS events_stream');
  await knex.raw('ALTER TABLE events DROP COLUMN IF EXISTS stream_seq');
  await knex.raw('DROP SEQUENCE IF EXISTS event_stream_seq');
}
