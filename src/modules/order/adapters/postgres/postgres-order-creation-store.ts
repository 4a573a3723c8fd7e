import type { Knex } from 'knex';
import type { ClientBase } from 'pg';
import type { DomainEvent } from '../../../event/domain/domain-event.ts';
import type { Order } from '../../domain/order.entity.ts';
import type { ClaimResult, IdempotencyRecord } from '../../../../kernel/ports/idempotency-store.port.ts';
import type { OrderCreationStore } from '../../ports/order-creation-store.port.ts';
import { namedStatementsAllowed, translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { PostgresIdempotencyStore } from '../../../../kernel/adapters/postgres/postgres-idempotency-store.ts';
import { eventToRow } from '../../../event/adapters/postgres/postgres-event-outbox.ts';
import { orderToRow } from './order-row.ts';

// Explicit casts: parameters of INSERT … SELECT are not typed by their target columns.
const ORDER_COLUMNS = [
  ['id', 'text'],
  ['merchant_id', 'text'],
  ['livemode', 'boolean'],
  ['reference', 'text'],
  ['amount', 'bigint'],
  ['currency', 'text'],
  ['status', 'text'],
  ['line_items', 'jsonb'],
  ['return_url', 'text'],
  ['checkout_url', 'text'],
  ['method', 'text'],
  ['settlement_currency', 'text'],
  ['settlement_amount', 'bigint'],
  ['version', 'integer'],
  ['created_at', 'timestamptz'],
  ['updated_at', 'timestamptz'],
  ['expires_at', 'timestamptz'],
  ['checkout_token', 'text'],
  ['client_secret_hash', 'text'],
  ['client_secret_expires_at', 'timestamptz'],
  ['capture_method', 'text'],
  ['payment_link_id', 'text'],
  ['customer_id', 'text'],
  ['subscription_id', 'text'],
  ['subscription_cycle', 'integer'],
] as const;
const EVENT_COLUMNS = [
  ['id', 'text'],
  ['merchant_id', 'text'],
  ['livemode', 'boolean'],
  ['type', 'text'],
  ['subject_type', 'text'],
  ['subject_id', 'text'],
  ['order_id', 'text'],
  ['reference', 'text'],
  ['sequence', 'integer'],
  ['data', 'jsonb'],
  ['created_at', 'timestamptz'],
] as const;
const KEY_COLUMNS = [
  ['merchant_id', 'text'],
  ['livemode', 'boolean'],
  ['key', 'text'],
  ['operation', 'text'],
  ['fingerprint', 'text'],
  ['resource_id', 'text'],
  ['response', 'jsonb'],
] as const;

function placeholders(columns: ReadonlyArray<readonly [string, string]>, offset: number): string {
  return columns.map(([, type], i) => `$${offset + i + 1}::${type}`).join(', ');
}
const names = (columns: ReadonlyArray<readonly [string, string]>) => columns.map(([name]) => name).join(', ');

const ORDER_AND_EVENT = (offset: number, from: string) =>
  `o AS (INSERT INTO orders (${names(ORDER_COLUMNS)}) SELECT ${placeholders(ORDER_COLUMNS, offset)} ${from}), ` +
  `e AS (INSERT INTO events (${names(EVENT_COLUMNS)}) SELECT ${placeholders(EVENT_COLUMNS, offset + ORDER_COLUMNS.length)} ${from} RETURNING 1)`;

/** With a key: the inserts read the claim's RETURNING, so they happen only when the key was free. */
const KEYED_SQL =
  `WITH claim AS (INSERT INTO idempotency_keys (${names(KEY_COLUMNS)}) VALUES (${placeholders(KEY_COLUMNS, 0)}) ` +
  `ON CONFLICT (merchant_id, livemode, key) DO NOTHING RETURNING 1), ${ORDER_AND_EVENT(KEY_COLUMNS.length, 'FROM claim')} ` +
  `SELECT count(*)::int AS created FROM e`;
const UNKEYED_SQL = `WITH ${ORDER_AND_EVENT(0, '')} SELECT count(*)::int AS created FROM e`;

/**
 * OrderCreationStore on Postgres: one statement (atomic on its own, no
 * BEGIN/COMMIT), run as a named prepared statement so Postgres plans it once
 * per connection. A key already held falls back to reading its record.
 */
export class PostgresOrderCreationStore implements OrderCreationStore {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  async create(claim: IdempotencyRecord | undefined, order: Order, event: DomainEvent): Promise<ClaimResult> {
    const row = orderToRow(order);
    const orderValues: Record<string, unknown> = { ...row, line_items: JSON.stringify(row.line_items) };
    const eventValues = eventToRow(event);
    const values = [...ORDER_COLUMNS.map(([c]) => orderValues[c]), ...EVENT_COLUMNS.map(([c]) => eventValues[c])];
    if (claim) {
      const keyValues: Record<string, unknown> = {
        merchant_id: claim.scope.merchantId,
        livemode: claim.scope.livemode,
        key: claim.key,
        operation: claim.operation,
        fingerprint: claim.fingerprint,
        resource_id: order.id,
        response: JSON.stringify(row),
      };
      values.unshift(...KEY_COLUMNS.map(([c]) => keyValues[c]));
    }
    const result = await translateErrors(async () => {
      const client = this.#knex.client as { acquireConnection(): Promise<ClientBase>; releaseConnection(c: ClientBase): Promise<void> };
      const connection = await client.acquireConnection();
      try {
        // Named: parsed and planned once per connection. Unnamed behind a pooler that cannot keep a name on the
        // server connection it hands out next (PgBouncer in transaction mode before 1.21).
        const name = namedStatementsAllowed(this.#knex) ? (claim ? 'create_order_keyed' : 'create_order') : undefined;
        return await connection.query<{ created: number }>({ name, text: claim ? KEYED_SQL : UNKEYED_SQL, values });
      } finally {
        await client.releaseConnection(connection);
      }
    });
    if (result.rows[0]?.created || !claim) return { claimed: true };
    // The key is held (a retry, or a concurrent request that committed first): answer its record.
    return translateErrors(() => this.#knex.transaction((trx) => new PostgresIdempotencyStore(trx).claim(claim)));
  }
}
