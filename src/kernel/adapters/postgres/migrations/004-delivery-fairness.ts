import type { Knex } from 'knex';

/** An index per endpoint over due deliveries, so a claim takes a few rows of each endpoint without scanning the backlog. */
export async function up(knex: Knex): Promise<void> {
  await knex.raw(`CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending'`);
}

/** Reverts 004. */
export async function down(knex: Knex): Promise<void> {
  await knex.raw('DROP INDEX IF EXISTS webhook_deliveries_endpoint_due');
}
