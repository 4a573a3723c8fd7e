import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { createDatabase, migrateLatest } from '../../src/kernel/adapters/postgres/database.ts';
import { DEFAULT_TEST_POSTGRES_URL } from './test-servers.ts';

/**
 * Postgres server the tests use; each test file gets a database of its own on it. test/support/global-setup.ts
 * chooses it once per run (test-servers.ts: TEST_POSTGRES_URL, the machine's, or an embedded one) and sets it here.
 */
export const TEST_POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? DEFAULT_TEST_POSTGRES_URL;

/** A migrated, throw-away database. */
export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  readonly knex: Knex;
  /** Destroys the pool and drops the database. */
  drop(): Promise<void>;
}

function adminUrl(): string {
  return `${TEST_POSTGRES_URL}/postgres`;
}

/** Creates an empty database with a random name, migrated to the latest schema unless migrate is false. */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const name = `checkout_test_${randomBytes(6).toString('hex')}`;
  const admin = createDatabase({ url: adminUrl(), poolMax: 1 });
  try {
    await admin.raw('CREATE DATABASE ??', [name]);
  } finally {
    await admin.destroy();
  }
  const url = `${TEST_POSTGRES_URL}/${name}`;
  // Small enough that parallel test files stay well under Postgres's max_connections (100 here).
  const knex = createDatabase({ url, poolMax: 15 });
  if (options.migrate ?? true) await migrateLatest(knex);
  return {
    name,
    url,
    knex,
    async drop() {
      await knex.destroy();
      const dropper = createDatabase({ url: adminUrl(), poolMax: 1 });
      try {
        await dropper.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
      } finally {
        await dropper.destroy();
      }
    },
  };
}

/** Row counts of the tables a request could write to. */
export async function rowCounts(knex: Knex): Promise<Record<'orders' | 'events' | 'idempotency_keys', number>> {
  const count = async (table: string) => Number((await knex(table).count<{ count: string }[]>('* as count'))[0]!.count);
  return { orders: await count('orders'), events: await count('events'), idempotency_keys: await count('idempotency_keys') };
}
