import type { Knex } from 'knex';
import { cryptoIdGenerator } from '../../node/crypto-id-generator.ts';

/**
 * The installation: one row naming this database's installation of the
 * service. Its id is stamped on the JetStream stream and on every published
 * event, so two installations sharing one NATS server can tell their streams
 * and events apart. Created here, once, so every process of the installation
 * (serve, dispatch) reads the same id.
 */
export async function up(knex: Knex): Promise<void> {
  await knex.schema.createTable('installation', (t) => {
    // A constant key: the table can never hold a second row.
    t.boolean('singleton').primary().defaultTo(true);
    t.text('id').notNullable().unique();
    t.timestamp('created_at', { useTz: true }).notNullable().defaultTo(knex.fn.now());
  });
  await knex.raw('ALTER TABLE installation ADD CONSTRAINT installation_one_row CHECK (singleton)');
  await knex('installation').insert({ id: cryptoIdGenerator.newId('ins_') });
}

/** Reverts 006. */
export async function down(knex: Knex): Promise<void> {
  await knex.schema.dropTableIfExists('installation');
}
