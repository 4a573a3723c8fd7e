import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { createDatabase, migrateLatest } from '../../src/kernel/adapters/postgres/database.ts';
import { cryptoIdGenerator } from '../../src/kernel/adapters/node/crypto-id-generator.ts';
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

function adminUrl(serverUrl = TEST_POSTGRES_URL): string {
  return `${serverUrl}/postgres`;
}

/**
 * The run's migrated database that {@link createTestDatabase} copies (test/support/global-setup.ts makes it once per
 * run and hands its name to the workers here): a copy takes a fraction of a second where migrating a new database
 * took half a second on an idle 2-core machine and 3 to 4 s under load, and the suites make about 80 of them.
 */
const TEMPLATE = process.env.TEST_POSTGRES_TEMPLATE;

/**
 * The rows the migrations write, each made the copy's own as a migration run on the copy would have made it; any other
 * table a migration fills stops the template's creation ({@link createTemplateDatabase}) until it is named here.
 */
const FRESH_PER_COPY: Readonly<Record<string, (knex: Knex) => Promise<unknown>>> = {
  // Stamped on the JetStream stream and on every event: each database is an installation of its own.
  installation: (knex) => knex('installation').update({ id: cryptoIdGenerator.newId('ins_'), created_at: knex.fn.now() }),
  // The ledger's invariants cover the payments captured since the database was migrated.
  ledger_start: (knex) => knex('ledger_start').update({ started_at: knex.fn.now() }),
  knex_migrations: async () => undefined,
  knex_migrations_lock: async () => undefined,
};

/** A migrated database for the run's test databases to be copied from; drop() removes it. */
export interface TemplateDatabase {
  readonly name: string;
  drop(): Promise<void>;
}

/**
 * Creates and migrates the run's template database on the server at serverUrl, and closes every connection to it (a
 * database is copied only while nobody is connected to it).
 * @throws Error when a migration left rows in a table {@link FRESH_PER_COPY} does not name.
 */
export async function createTemplateDatabase(serverUrl: string): Promise<TemplateDatabase> {
  const name = `checkout_test_template_${randomBytes(6).toString('hex')}`;
  const admin = createDatabase({ url: adminUrl(serverUrl), poolMax: 1 });
  const drop = async () => {
    const dropper = createDatabase({ url: adminUrl(serverUrl), poolMax: 1 });
    try {
      await dropper.raw('DROP DATABASE IF EXISTS ?? WITH (FORCE)', [name]);
    } finally {
      await dropper.destroy();
    }
  };
  try {
    await admin.raw('CREATE DATABASE ??', [name]);
  } finally {
    await admin.destroy();
  }
  const knex = createDatabase({ url: `${serverUrl}/${name}`, poolMax: 1 });
  try {
    await migrateLatest(knex);
    const tables = (await knex('pg_tables').where({ schemaname: 'public' }).pluck('tablename')) as string[];
    const filled = [];
    for (const table of tables) if (!(table in FRESH_PER_COPY) && (await knex(table).first())) filled.push(table);
    if (filled.length > 0) throw new Error(`the migrations left rows in ${filled.join(', ')}: say in test/support/database.ts (FRESH_PER_COPY) how a copy makes them its own`);
  } catch (err) {
    await knex.destroy();
    await drop();
    throw err;
  }
  await knex.destroy();
  return { name, drop };
}

/**
 * Creates an empty database with a random name, migrated to the latest schema unless migrate is false: a copy of the
 * run's template when there is one, with its {@link FRESH_PER_COPY} rows made its own, else migrated here.
 */
export async function createTestDatabase(options: { migrate?: boolean } = {}): Promise<TestDatabase> {
  const migrate = options.migrate ?? true;
  const name = `checkout_test_${randomBytes(6).toString('hex')}`;
  const admin = createDatabase({ url: adminUrl(), poolMax: 1 });
  try {
    if (migrate && TEMPLATE) await admin.raw('CREATE DATABASE ?? TEMPLATE ??', [name, TEMPLATE]);
    else await admin.raw('CREATE DATABASE ??', [name]);
  } finally {
    await admin.destroy();
  }
  const url = `${TEST_POSTGRES_URL}/${name}`;
  // Small enough that parallel test files stay well under Postgres's max_connections (100 here).
  const knex = createDatabase({ url, poolMax: 15 });
  if (migrate && TEMPLATE) for (const fresh of Object.values(FRESH_PER_COPY)) await fresh(knex);
  else if (migrate) await migrateLatest(knex);
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
