import type { Knex } from 'knex';

/**
 * Failed authentications per client address (docs/api.md#authentication-failures): one row per
 * address that failed in its current window, counted in one statement under the row's lock, so every
 * instance of the service shares the count. Rows whose window has ended are deleted by the janitor:
 * the table holds at most the addresses that failed within the last hour or so.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('auth_failures', (t) => {
    // The client address (an IPv6 one as its /64), as the authentication saw it.
    t.text('address').primary();
    t.timestamp('window_start', { useTz: true }).notNullable();
    t.integer('failures').notNullable();
  });
  await knex.raw('CREATE INDEX auth_failures_window ON auth_failures (window_start)');
}

/** Reverts 025. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('auth_failures');
}
