import type { Knex } from 'knex';

/** Webhook endpoints with rotating secrets, the per-endpoint delivery queue and its attempt log. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_endpoints', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    t.text('url');
    t.specificType('enabled_events', 'text[]').notNullable();
    t.text('description').notNullable().defaultTo('');
    t.text('disabled_reason');
    t.boolean('is_default').notNullable().defaultTo(false);
    t.timestamp('failing_since', { useTz: true });
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.timestamp('deleted_at', { useTz: true });
    t.index(['merchant_id', 'livemode']);
  });
  await knex.schema.createTable('webhook_endpoint_secrets', (t) => {
    t.bigIncrements('id');
    t.text('endpoint_id').notNullable().references('webhook_endpoints.id');
    // Kept retrievable: every delivery is signed with it.
    t.text('secret').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    // Set when a rotation retires the secret; it still signs until then.
    t.timestamp('expires_at', { useTz: true });
    t.index(['endpoint_id']);
  });

  // The sandbox's issued secrets become the secrets of default endpoints, which wait for a URL.
  const secrets = await knex('webhook_secrets').select('*');
  for (const row of secrets) {
    const id = `we_default_${row.merchant_id.slice(4)}_${row.livemode ? 'live' : 'test'}`;
    await knex('webhook_endpoints').insert({
      id,
      merchant_id: row.merchant_id,
      livemode: row.livemode,
      url: null,
      enabled_events: ['*'],
      description: 'Default endpoint (holds the webhook secret issued with the sandbox)',
      disabled_reason: 'no_url',
      is_default: true,
      created_at: row.created_at,
      updated_at: row.created_at,
    });
    await knex('webhook_endpoint_secrets').insert({ endpoint_id: id, secret: row.secret, created_at: row.created_at });
  }
  await knex.schema.dropTable('webhook_secrets');

  await knex.schema.createTable('webhook_deliveries', (t) => {
    t.bigIncrements('id');
    t.text('event_id').notNullable();
    t.text('endpoint_id').notNullable().references('webhook_endpoints.id');
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    // The exact bytes sent on every attempt.
    t.text('body').notNullable();
    t.text('status').notNullable().checkIn(['pending', 'succeeded', 'failed']);
    t.integer('attempt_count').notNullable().defaultTo(0);
    t.timestamp('next_attempt_at', { useTz: true }).notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    t.unique(['event_id', 'endpoint_id']);
  });
  await knex.raw(`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending'`);

  await knex.schema.createTable('webhook_delivery_attempts', (t) => {
    t.bigIncrements('id');
    t.bigInteger('delivery_id').notNullable().references('webhook_deliveries.id');
    t.text('event_id').notNullable();
    t.text('endpoint_id').notNullable();
    t.timestamp('attempted_at', { useTz: true }).notNullable();
    t.integer('status_code');
    t.text('error');
    t.integer('duration_ms').notNullable();
    t.text('response_excerpt').notNullable().defaultTo('');
    t.index(['event_id', 'attempted_at']);
  });
}

/** Reverts 003 (the default endpoints' current secrets go back to webhook_secrets). */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.createTable('webhook_secrets', (t) => {
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    t.text('secret').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['merchant_id', 'livemode']);
  });
  await knex.raw(`
    INSERT INTO webhook_secrets (merchant_id, livemode, secret, created_at)
    SELECT DISTINCT ON (e.merchant_id, e.livemode) e.merchant_id, e.livemode, s.secret, s.created_at
    FROM webhook_endpoints e JOIN webhook_endpoint_secrets s ON s.endpoint_id = e.id
    WHERE e.is_default AND s.expires_at IS NULL
    ORDER BY e.merchant_id, e.livemode, s.created_at DESC`);
  for (const table of ['webhook_delivery_attempts', 'webhook_deliveries', 'webhook_endpoint_secrets', 'webhook_endpoints']) {
    await knex.schema.dropTableIfExists(table);
  }
}
