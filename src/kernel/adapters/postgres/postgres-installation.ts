import type { Knex } from 'knex';
import { translateErrors } from './database.ts';

/**
 * The id of the installation this database belongs to (`ins_…`), created
 * once by migration 006.
 * @throws Error when the database is not migrated.
 */
export async function readInstallationId(knex: Knex): Promise<string> {
  const row = await translateErrors(() => knex('installation').first<{ id: string } | undefined>('id'));
  if (!row) throw new Error('The installation table is empty; run the migrations (checkout migrate).');
  return row.id;
}
