import type { Knex } from 'knex';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { DisabledReason, WebhookEndpoint } from '../../domain/webhook-endpoint.entity.ts';
import type { EndpointChanges, SigningSecretRecord, WebhookEndpointRepository } from '../../ports/webhook-endpoint-repository.port.ts';
import type { SealedSecret } from '../../../../kernel/ports/key-ring.port.ts';
import { retryingDeadlocks, translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** A row of webhook_endpoint_secrets as read: sealed, or (written by an earlier release) in clear. */
export interface SecretRow {
  id: string;
  secret: string | null;
  kek_id: string | null;
  wrapped_key: Buffer | null;
  ciphertext: Buffer | null;
}

/** The columns of a signing secret read back. */
export const SECRET_COLUMNS = ['id', 'secret', 'kek_id', 'wrapped_key', 'ciphertext'] as const;

/** The stored columns of a sealed signing secret (the `secret` column stays null). */
export function sealedSecretColumns(sealed: SealedSecret): { kek_id: string; wrapped_key: Buffer; ciphertext: Buffer } {
  return { kek_id: sealed.kekId, wrapped_key: Buffer.from(sealed.wrappedKey), ciphertext: Buffer.from(sealed.ciphertext) };
}

/** A stored signing secret as the port gives it. */
export function secretRecordOf(row: SecretRow): SigningSecretRecord {
  const id = String(row.id);
  if (row.ciphertext && row.wrapped_key && row.kek_id) return { id, sealed: { kekId: row.kek_id, wrappedKey: row.wrapped_key, ciphertext: row.ciphertext } };
  if (row.secret !== null) return { id, clear: row.secret };
  throw new Error(`webhook signing secret ${id} holds neither a sealed nor a clear secret`);
}

interface EndpointRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  url: string | null;
  enabled_events: string[];
  description: string;
  disabled_reason: string | null;
  is_default: boolean;
  created_at: Date;
}

function fromRow(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    url: row.url,
    enabledEvents: row.enabled_events,
    description: row.description,
    disabledReason: row.disabled_reason as DisabledReason | null,
    isDefault: row.is_default,
    createdAt: row.created_at,
  };
}

/** Webhook endpoints and their secrets on Postgres. */
export class PostgresWebhookEndpointRepository implements WebhookEndpointRepository {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  #scoped(scope: Scope) {
    return this.#knex<EndpointRow>('webhook_endpoints').where({ merchant_id: scope.merchantId, livemode: scope.livemode }).whereNull('deleted_at');
  }

  insert(endpoint: WebhookEndpoint, secret: SealedSecret, maxPerMode: number): Promise<{ secretId: string } | 'limit_reached'> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        // Serialises inserts per merchant and mode until commit, so that two concurrent creates cannot
        // both count 15 and both insert. (A hash collision between two merchants only makes them wait.)
        await trx.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`webhook_endpoints:${endpoint.merchantId}:${endpoint.livemode}`]);
        const [{ count }] = (await trx('webhook_endpoints')
          .where({ merchant_id: endpoint.merchantId, livemode: endpoint.livemode })
          .whereNull('deleted_at')
          .count<{ count: string }[]>('* as count')) as [{ count: string }];
        if (Number(count) >= maxPerMode) return 'limit_reached';
        await trx('webhook_endpoints').insert({
          id: endpoint.id,
          merchant_id: endpoint.merchantId,
          livemode: endpoint.livemode,
          url: endpoint.url,
          enabled_events: endpoint.enabledEvents,
          description: endpoint.description,
          disabled_reason: endpoint.disabledReason,
          is_default: endpoint.isDefault,
          created_at: endpoint.createdAt,
          updated_at: endpoint.createdAt,
        });
        const [row] = (await trx('webhook_endpoint_secrets')
          .insert({ endpoint_id: endpoint.id, ...sealedSecretColumns(secret), created_at: endpoint.createdAt })
          .returning('id')) as { id: string }[];
        return { secretId: String(row!.id) };
      }),
    );
  }

  async findById(scope: Scope, id: string): Promise<WebhookEndpoint | undefined> {
    const row = await translateErrors(() => this.#scoped(scope).where({ id }).first());
    return row ? fromRow(row) : undefined;
  }

  async list(scope: Scope): Promise<WebhookEndpoint[]> {
    const rows = await translateErrors(() => this.#scoped(scope).orderBy([{ column: 'created_at', order: 'desc' }, { column: 'id', order: 'desc' }]));
    return rows.map(fromRow);
  }

  async update(scope: Scope, id: string, changes: EndpointChanges): Promise<WebhookEndpoint | undefined> {
    const patch: Record<string, unknown> = { updated_at: new Date() };
    if (changes.url !== undefined) patch.url = changes.url;
    if (changes.enabledEvents !== undefined) patch.enabled_events = changes.enabledEvents;
    if (changes.description !== undefined) patch.description = changes.description;
    if (changes.disabledReason !== undefined) {
      patch.disabled_reason = changes.disabledReason;
      if (changes.disabledReason === null) patch.failing_since = null;
    }
    const rows = await translateErrors(() => this.#scoped(scope).where({ id }).update(patch).returning('*'));
    return rows[0] ? fromRow(rows[0] as EndpointRow) : undefined;
  }

  async delete(scope: Scope, id: string): Promise<boolean> {
    // The dispatcher's claim locks pending deliveries in its own order: a deadlock with it is retried.
    return translateErrors(() =>
      retryingDeadlocks(() => this.#knex.transaction(async (trx) => {
        const gone = await trx('webhook_endpoints')
          .where({ id, merchant_id: scope.merchantId, livemode: scope.livemode })
          .whereNull('deleted_at')
          .update({ deleted_at: new Date(), updated_at: new Date() });
        if (gone === 0) return false;
        await trx('webhook_deliveries').where({ endpoint_id: id, status: 'pending' }).update({ status: 'failed', updated_at: new Date() });
        return true;
      })),
    );
  }

  rotateSecret(endpointId: string, secret: SealedSecret, retireAt: Date, now: Date): Promise<string> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        await trx('webhook_endpoint_secrets')
          .where({ endpoint_id: endpointId })
          .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', retireAt))
          .update({ expires_at: retireAt });
        const [row] = (await trx('webhook_endpoint_secrets').insert({ endpoint_id: endpointId, ...sealedSecretColumns(secret), created_at: now }).returning('id')) as { id: string }[];
        return String(row!.id);
      }),
    );
  }

  async activeSecrets(endpointId: string, now: Date): Promise<SigningSecretRecord[]> {
    const rows = (await translateErrors(() =>
      this.#knex('webhook_endpoint_secrets')
        .where({ endpoint_id: endpointId })
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
        .orderBy('id', 'desc')
        .select(...SECRET_COLUMNS),
    )) as SecretRow[];
    return rows.map(secretRecordOf);
  }

  async findSecret(endpointId: string, secretId: string): Promise<SigningSecretRecord | undefined> {
    if (!/^\d{1,18}$/.test(secretId)) return undefined;
    const row = (await translateErrors(() => this.#knex('webhook_endpoint_secrets').where({ endpoint_id: endpointId, id: secretId }).first(...SECRET_COLUMNS))) as SecretRow | undefined;
    return row ? secretRecordOf(row) : undefined;
  }

  async findDefault(scope: Scope): Promise<WebhookEndpoint | undefined> {
    const row = await translateErrors(() => this.#scoped(scope).where({ is_default: true }).first());
    return row ? fromRow(row) : undefined;
  }
}
