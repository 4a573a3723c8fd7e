import type { Knex } from 'knex';

/**
 * Customers and the card vault (issue 10). A vaulted card's number and holder name are sealed by
 * envelope encryption (docs/recurring.md): `ciphertext` is AES-256-GCM under a data key of its own,
 * stored only wrapped (`wrapped_key`) by the key-encryption key `kek_id` names, which lives in the
 * operator's configuration, never here. `checkout keys rotate` rewrites `kek_id` and `wrapped_key`
 * and never touches `ciphertext`. No column holds a CVC: a card token's CVC lives only inside its
 * sealed payload, and the token row is deleted when it is used or has expired.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('customers', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable().references('merchants.id');
    t.boolean('livemode').notNullable();
    t.text('email');
    t.text('name');
    t.text('reference');
    t.jsonb('metadata').notNullable().defaultTo('{}');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('updated_at', { useTz: true }).notNullable();
    // A deleted customer keeps its id (orders name it) and loses everything else.
    t.timestamp('deleted_at', { useTz: true });
  });
  await knex.raw('CREATE INDEX customers_list ON customers (merchant_id, livemode, created_at DESC, id DESC) WHERE deleted_at IS NULL');

  const sealed = (t: Knex.CreateTableBuilder) => {
    t.text('kek_id').notNullable();
    t.binary('wrapped_key').notNullable();
    t.binary('ciphertext').notNullable();
  };
  await knex.schema.createTable('vault_cards', (t) => {
    t.text('id').primary();
    t.text('customer_id').notNullable().references('customers.id');
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('brand').notNullable();
    t.text('last4').notNullable();
    t.integer('exp_month').notNullable();
    t.integer('exp_year').notNullable();
    t.text('fingerprint').notNullable();
    sealed(t);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['customer_id', 'created_at']);
    t.index(['kek_id']);
  });
  await knex.schema.createTable('vault_tokens', (t) => {
    t.text('id').primary();
    t.text('merchant_id').notNullable();
    t.boolean('livemode').notNullable();
    t.text('brand').notNullable();
    t.text('last4').notNullable();
    t.integer('exp_month').notNullable();
    t.integer('exp_year').notNullable();
    sealed(t);
    // Set for the checkout page's "save this card": the card to vault once this order is paid by it.
    t.text('order_id');
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.timestamp('expires_at', { useTz: true }).notNullable();
    t.index(['order_id']);
    t.index(['expires_at']);
    t.index(['kek_id']);
  });
  // Each merchant's fingerprint secret (HMAC key), sealed like a card so that rotation re-wraps it too.
  await knex.schema.createTable('vault_merchant_secrets', (t) => {
    t.text('merchant_id').primary().references('merchants.id');
    sealed(t);
    t.timestamp('created_at', { useTz: true }).notNullable();
    t.index(['kek_id']);
  });
  await knex.schema.alterTable('orders', (t) => {
    t.text('customer_id');
  });
  await knex.raw('CREATE INDEX orders_customer ON orders (customer_id) WHERE customer_id IS NOT NULL');
  await knex.schema.alterTable('payment_attempts', (t) => {
    // The vaulted card an attempt charged (card_…), kept after the card is deleted as a record of what paid.
    t.text('saved_card_id');
  });
}

/** Reverts 018. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.alterTable('payment_attempts', (t) => t.dropColumn('saved_card_id'));
  await knex.raw('DROP INDEX IF EXISTS orders_customer');
  await knex.schema.alterTable('orders', (t) => t.dropColumn('customer_id'));
  await knex.schema.dropTableIfExists('vault_merchant_secrets');
  await knex.schema.dropTableIfExists('vault_tokens');
  await knex.schema.dropTableIfExists('vault_cards');
  await knex.schema.dropTableIfExists('customers');
}
