import type { Knex } from 'knex';
import type { Scope } from '../../../domain/merchant/caller.ts';
import type { DisabledReason, WebhookEndpoint } from '../../../domain/webhook/webhook-endpoint.entity.ts';
import type { EndpointChanges, WebhookEndpointRepository } from '../../../ports/webhook/webhook-endpoint-repository.port.ts';
import { retryingDeadlocks, translateErrors } from '../database.ts';

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

  insert(endpoint: WebhookEndpoint, secret: string, maxPerMode: number): Promise<'inserted' | 'limit_reached'> {
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
        await trx('webhook_endpoint_secrets').insert({ endpoint_id: endpoint.id, secret, created_at: endpoint.createdAt });
        return 'inserted';
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

  rotateSecret(endpointId: string, secret: string, retireAt: Date, now: Date): Promise<void> {
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        await trx('webhook_endpoint_secrets')
          .where({ endpoint_id: endpointId })
          .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', retireAt))
          .update({ expires_at: retireAt });
        await trx('webhook_endpoint_secrets').insert({ endpoint_id: endpointId, secret, created_at: now });
      }),
    );
  }

  async activeSecrets(endpointId: string, now: Date): Promise<string[]> {
    const rows = await translateErrors(() =>
      this.#knex('webhook_endpoint_secrets')
        .where({ endpoint_id: endpointId })
        .andWhere((q) => q.whereNull('expires_at').orWhere('expires_at', '>', now))
        .orderBy('id', 'desc')
        .select('secret'),
    );
    return rows.map((r: { secret: string }) => r.secret);
  }

  async findDefault(scope: Scope): Promise<WebhookEndpoint | undefined> {
    const row = await translateErrors(() => this.#scoped(scope).where({ is_default: true }).first());
    return row ? fromRow(row) : undefined;
  }
}
