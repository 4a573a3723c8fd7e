import type { Knex } from 'knex';
import { createDatabase, migrateLatest, migrateDown } from '../kernel/adapters/postgres/database.ts';
import type { KeyRing } from '../kernel/ports/key-ring.port.ts';

/** Failure to start, with a message for the operator. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

/** Hides the password of a connection URL in messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}

/**
 * Creates the database named in the URL when it does not exist yet, so that
 * `npm start` (and `checkout migrate`, `checkout sandbox create`) work on a fresh Postgres.
 * @throws StartupError when Postgres cannot be reached or the database cannot be created.
 */
export async function ensureDatabase(url: string): Promise<void> {
  const probe = createDatabase({ url, poolMax: 1 });
  try {
    await probe.raw('select 1');
    return;
  } catch (err) {
    if ((err as { code?: string }).code !== '3D000') {
      throw new StartupError(`Cannot reach Postgres at ${redactUrl(url)}: ${(err as Error).message}. Start Postgres or set DATABASE_URL.`);
    }
  } finally {
    await probe.destroy();
  }
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  target.pathname = '/postgres';
  const admin = createDatabase({ url: target.toString(), poolMax: 1 });
  try {
    await admin.raw('CREATE DATABASE ??', [name]);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P04') {
      throw new StartupError(`Database "${name}" does not exist and could not be created: ${(err as Error).message}`);
    }
  } finally {
    await admin.destroy();
  }
}

/**
 * Opens a pool on the configured database, creating and migrating it first (with the vault's keys,
 * which migration 027 seals the webhook signing secrets under).
 * @throws StartupError when Postgres cannot be reached or the database cannot be created.
 */
export async function openDatabase(url: string, poolMax: number, namedStatements = true, keyRing?: KeyRing): Promise<Knex> {
  await ensureDatabase(url);
  const knex = createDatabase({ url, poolMax, namedStatements });
  try {
    await migrateLatest(knex, { keyRing });
  } catch (err) {
    await knex.destroy();
    throw err;
  }
  return knex;
}

/**
 * Creates the database if needed and runs the pending migrations (`checkout migrate`) with the
 * vault's keys; answers their names.
 * @throws StartupError when Postgres cannot be reached or the database cannot be created.
 */
export async function migrateDatabase(url: string, keyRing?: KeyRing): Promise<string[]> {
  await ensureDatabase(url);
  const knex = createDatabase({ url, poolMax: 1 });
  try {
    return await migrateLatest(knex, { keyRing });
  } finally {
    await knex.destroy();
  }
}

/**
 * Reverts the last migration applied (`checkout migrate --down`), with the vault's keys (reverting
 * 027 opens the webhook signing secrets back into clear for an earlier release); answers its name.
 */
export async function revertLastMigration(url: string, keyRing?: KeyRing): Promise<string[]> {
  const knex = createDatabase({ url, poolMax: 1 });
  try {
    return await migrateDown(knex, { keyRing });
  } finally {
    await knex.destroy();
  }
}
