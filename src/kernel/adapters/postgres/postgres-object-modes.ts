import type { Knex } from 'knex';
import type { ObjectModes } from '../../ports/object-modes.port.ts';
import { translateErrors } from './database.ts';

/** The table of each kind of object a call may name by id, by the id's prefix; each has id, merchant_id and livemode. */
const TABLES: ReadonlyArray<readonly [prefix: string, table: string]> = [
  ['ord_', 'orders'],
  ['re_', 'refunds'],
  ['dp_', 'disputes'],
  ['plink_', 'payment_links'],
  ['evt_', 'events'],
  ['we_', 'webhook_endpoints'],
  ['cus_', 'customers'],
  ['card_', 'vault_cards'],
  ['sub_', 'subscriptions'],
  ['po_', 'payouts'],
  ['pay_', 'payments'],
  ['att_', 'payment_attempts'],
];

/** What every id we issue looks like (request-guard.ts refuses others before any lookup). */
const ID_SHAPE = /^[A-Za-z0-9_]{1,100}$/;

/** {@link ObjectModes} on Postgres: one lookup by primary key, scoped to the merchant. */
export class PostgresObjectModes implements ObjectModes {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  async modeOf(merchantId: string, id: string): Promise<boolean | undefined> {
    if (!ID_SHAPE.test(id)) return undefined;
    const table = TABLES.find(([prefix]) => id.startsWith(prefix))?.[1];
    if (!table) return undefined;
    const row = await translateErrors(() => this.#knex(table).where({ id, merchant_id: merchantId }).first<{ livemode: boolean } | undefined>('livemode'));
    return row?.livemode;
  }
}
