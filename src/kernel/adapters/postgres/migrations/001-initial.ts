import type { Knex } from 'knex';

/** Merchants, their credentials, orders, idempotency keys and the event outbox. */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('merchants', (t) => {
    t.text('id').primary();
    t.text('name').notNullable();
    t.text('checkout_host').notNullable();
    t.specificType('settlement_currency', 'char(3)').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
  });
  await knex.schema.createTable('api_keys', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.text('kind').notNullable().checkIn(['secret', 'publishable']);
    t.boolean('livemode').notNullable();
    // SHA-256 of the key: keys carry 190 random bits, so a fast hash is enough and the key itself is never stored.
    t.text('key_hash').notNullable().unique();
    t.text('key_hint').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('revoked_at', { useTz: true });
    t.index(['merchant_id']);
  });
  await knex.schema.createTable('webhook_secrets', (t) => {
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    // Kept retrievable: the dispatcher signs with it.
    t.text('secret').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.primary(['merchant_id', 'livemode']);
  });
  await knex.schema.createTable('orders', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    t.text('reference').notNullable();
    t.bigInteger('amount').notNullable();
    t.specificType('currency', 'char(3)').notNullable();
    t.text('status').notNullable();
    t.jsonb('line_items').notNullable();
    t.text('return_url');
    t.text('checkout_url').notNullable();
    t.text('method');
    t.specificType('settlement_currency', 'char(3)');
    t.bigInteger('settlement_amount');
    t.integer('version').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
  });
  await knex.raw('ALTER TABLE orders ADD CONSTRAINT orders_amount_positive CHECK (amount > 0)');
  await knex.raw('CREATE INDEX orders_list ON orders (merchant_id, livemode, created_at DESC, id DESC)');
  await knex.raw('CREATE INDEX orders_by_reference ON orders (merchant_id, livemode, reference, created_at DESC, id DESC)');

  await knex.schema.createTable('idempotency_keys', (t) => {
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('key').notNullable();
    t.text('operation').notNullable();
    t.text('fingerprint').notNullable();
    t.text('resource_id').notNullable();
    // The original response, as the row of the created resource.
    t.jsonb('response').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
    t.primary(['merchant_id', 'livemode', 'key']);
    t.index(['created_at']);
  });

  await knex.schema.createTable('events', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('type').notNullable();
    t.text('order_id').notNullable();
    t.text('reference').notNullable();
    t.integer('sequence').notNullable();
    t.jsonb('data').notNullable();
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('published_at', { useTz: true });
    t.unique(['order_id', 'sequence']);
  });
  await knex.raw('CREATE INDEX events_unpublished ON events (created_at, id) WHERE published_at IS NULL');
  await knex.raw('CREATE INDEX events_list ON events (merchant_id, livemode, created_at DESC, id DESC)');
}

/** Drops everything 001 created. */
export async function down(knex: Knex): Promise<void> {
  for (const table of ['events', 'idempotency_keys', 'orders', 'webhook_secrets', 'api_keys', 'merchants']) {
    await knex.schema.dropTableIfExists(table);
  }
}
