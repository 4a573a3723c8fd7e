import type { Knex } from 'knex';
import type { ObjectModes } from '../../ports/object-modes.port.ts';
import { translateErrors } from './database.ts';
import type { ObjectTable } from '../../module-manifest.ts';

/** What every id we issue looks like (request-guard.ts refuses others before any lookup). */
const ID_SHAPE = /^[A-Za-z0-9_]{1,100}$/;

/** {@link ObjectModes} on Postgres: one lookup by primary key, scoped to the merchant. */
export class PostgresObjectModes implements ObjectModes {
  readonly #knex: Knex;
  readonly #tables: readonly ObjectTable[];

  /** `tables`: each kind of object a call may name by id, by the id's prefix (the modules' postgresObjectTables). */
  constructor(knex: Knex, tables: readonly ObjectTable[]) {
    this.#knex = knex;
    this.#tables = tables;
  }

  async modeOf(merchantId: string, id: string): Promise<boolean | undefined> {
    if (!ID_SHAPE.test(id)) return undefined;
    const table = this.#tables.find(([prefix]) => id.startsWith(prefix))?.[1];
    if (!table) return undefined;
    const row = await translateErrors(() => this.#knex(table).where({ id, merchant_id: merchantId }).first<{ livemode: boolean } | undefined>('livemode'));
    return row?.livemode;
  }
}
