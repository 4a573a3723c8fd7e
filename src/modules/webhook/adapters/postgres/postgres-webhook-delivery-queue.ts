import type { Knex } from 'knex';
import type { DomainEvent } from '../../../event/domain/domain-event.ts';
import type { Scope } from '../../../merchant/domain/caller.ts';
import { webhookBody } from '../../domain/webhook-body.ts';
import type { AttemptRecord, ClaimedDelivery, DeliveryAttemptView, WebhookDeliveryQueue } from '../../ports/webhook-delivery-queue.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';
import { rowToEvent, type EventRow } from '../../../event/adapters/postgres/postgres-event-outbox.ts';
import { secretRecordOf } from './postgres-webhook-endpoint-repository.ts';

/** A signing secret as claimDue's query gives it (bytea as hex). */
interface StoredSecretJson {
  id: string;
  secret: string | null;
  kek_id: string | null;
  wrapped_key: string | null;
  ciphertext: string | null;
}

const SUBSCRIBED = `(e.enabled_events @> ARRAY['*']::text[] OR e.enabled_events @> ARRAY[?]::text[])`;
const DELIVERABLE = `e.deleted_at IS NULL AND e.disabled_reason IS NULL AND e.url IS NOT NULL`;

/** An enqueue waiting for its batch's statement. */
interface PendingEnqueue {
  readonly event: DomainEvent;
  readonly body: string;
  readonly now: Date;
  readonly resolve: (answer: { known: boolean; queued: number }) => void;
  readonly reject: (err: unknown) => void;
}

/** What tells two enqueues of the same event apart from a forged copy: id, merchant, mode and type. */
const keyOf = ({ event }: PendingEnqueue) => JSON.stringify([event.id, event.merchantId, event.livemode, event.type]);

/** The delivery queue on Postgres: leases by next_attempt_at, fairness by a per-endpoint cap. */
export class PostgresWebhookDeliveryQueue implements WebhookDeliveryQueue {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  /**
   * Queues an event's deliveries. Calls made in the same turn of the event loop (the dispatcher
   * handles up to 64 events at once) share one statement: the events' rows are looked up and the
   * deliveries inserted only for those found, so an event this installation never wrote
   * (another's, or forged) queues nothing. Each caller gets its own event's answer.
   */
  enqueue(event: DomainEvent, body: string, now: Date): Promise<{ known: boolean; queued: number }> {
    return new Promise((resolve, reject) => {
      const batch = (this.#pending ??= []);
      batch.push({ event, body, now, resolve, reject });
      if (batch.length === 1) setImmediate(() => void this.#flush());
    });
  }

  #pending: PendingEnqueue[] | undefined;

  async #flush(): Promise<void> {
    const batch = this.#pending ?? [];
    this.#pending = undefined;
    if (batch.length === 0) return;
    try {
      const answers = await translateErrors(() => this.#enqueueMany(batch));
      for (const item of batch) item.resolve(answers.get(keyOf(item)) ?? { known: false, queued: 0 });
    } catch (err) {
      if (batch.length === 1) return batch[0]!.reject(err);
      // One bad message (a forged id Postgres cannot take, say) must not hold up the others: each alone.
      await Promise.all(
        batch.map((item) =>
          translateErrors(() => this.#enqueueMany([item])).then(
            (answers) => item.resolve(answers.get(keyOf(item)) ?? { known: false, queued: 0 }),
            item.reject,
          ),
        ),
      );
    }
  }

  async #enqueueMany(batch: readonly PendingEnqueue[]): Promise<Map<string, { known: boolean; queued: number }>> {
    // A redelivered event may be in the batch twice: it is queued once, and both callers get its answer.
    // Copies that differ in merchant, mode or type (a forged one) are kept apart: each gets its own answer.
    const unique = [...new Map(batch.map((item) => [keyOf(item), item])).values()];
    // One JSON parameter: knex would spread an array bound to a placeholder into a list.
    const input = JSON.stringify(
      unique.map((item) => ({ k: keyOf(item), id: item.event.id, merchant_id: item.event.merchantId, livemode: item.event.livemode, type: item.event.type, body: item.body, queued_at: item.now.toISOString() })),
    );
    const result = await this.#knex.raw(
      `WITH input AS (
         SELECT * FROM json_to_recordset(?::json) AS i(k text, id text, merchant_id text, livemode boolean, type text, body text, queued_at timestamptz)
       ), known AS (
         SELECT i.* FROM input i
         JOIN events ev ON ev.id = i.id AND ev.merchant_id = i.merchant_id AND ev.livemode = i.livemode AND ev.type = i.type
       ), queued AS (
         INSERT INTO webhook_deliveries (event_id, endpoint_id, merchant_id, livemode, body, status, attempt_count, next_attempt_at, created_at, updated_at)
         SELECT k.id, e.id, e.merchant_id, e.livemode, k.body, 'pending', 0, k.queued_at, k.queued_at, k.queued_at
         FROM known k
         JOIN webhook_endpoints e ON e.merchant_id = k.merchant_id AND e.livemode = k.livemode AND ${DELIVERABLE}
           AND (e.enabled_events @> ARRAY['*']::text[] OR e.enabled_events @> ARRAY[k.type]::text[])
         ON CONFLICT (event_id, endpoint_id) DO NOTHING
         RETURNING event_id
       )
       SELECT i.k, EXISTS (SELECT 1 FROM known k WHERE k.k = i.k) AS known,
              CASE WHEN EXISTS (SELECT 1 FROM known k WHERE k.k = i.k) THEN (SELECT count(*) FROM queued q WHERE q.event_id = i.id) ELSE 0 END::int AS queued
       FROM input i`,
      [input],
    );
    return new Map((result.rows as { k: string; known: boolean; queued: number }[]).map((row) => [row.k, { known: row.known, queued: row.queued }]));
  }

  async claimDue(options: {
    limit: number;
    perEndpoint: number;
    excludeEndpoints: readonly string[];
    inFlight?: Readonly<Record<string, number>>;
    perMerchant?: number;
    merchantInFlight?: Readonly<Record<string, number>>;
    excludeMerchants?: readonly string[];
    leaseMs: number;
    now: Date;
  }): Promise<ClaimedDelivery[]> {
    if (options.limit <= 0) return [];
    const leaseUntil = new Date(options.now.getTime() + options.leaseMs);
    const result = await translateErrors(() =>
      this.#knex.raw(
        // Per endpoint, at most its cap minus what is already in flight, read from the
        // (endpoint_id, next_attempt_at) index: a backlog of one endpoint is never scanned whole,
        // and it cannot crowd out the due deliveries of the others. Per merchant likewise, so one
        // merchant's many slow endpoints cannot take every slot from the other merchants.
        `WITH candidates AS (
           SELECT d.id, d.next_attempt_at, e.merchant_id FROM webhook_endpoints e
           CROSS JOIN LATERAL (
             SELECT d.id, d.next_attempt_at FROM webhook_deliveries d
             WHERE d.endpoint_id = e.id AND d.status = 'pending' AND d.next_attempt_at <= ?
             ORDER BY d.next_attempt_at, d.id
             LIMIT GREATEST(0, ? - COALESCE((?::jsonb ->> e.id)::int, 0))
           ) d
           WHERE ${DELIVERABLE} AND NOT (e.id = ANY(string_to_array(?, ','))) AND NOT (e.merchant_id = ANY(string_to_array(?, ',')))
         ), picked AS (
           SELECT id FROM (
             SELECT id, next_attempt_at, merchant_id, row_number() OVER (PARTITION BY merchant_id ORDER BY next_attempt_at, id) AS n FROM candidates
           ) ranked
           WHERE n <= GREATEST(0, ? - COALESCE((?::jsonb ->> merchant_id)::int, 0))
           ORDER BY next_attempt_at, id
           LIMIT ?
         )
         UPDATE webhook_deliveries d SET next_attempt_at = ?, updated_at = ?
         FROM picked, webhook_endpoints e
         WHERE d.id = picked.id AND d.status = 'pending' AND d.next_attempt_at <= ? AND e.id = d.endpoint_id
         RETURNING d.id, d.event_id, d.endpoint_id, d.merchant_id, d.livemode, d.body, d.attempt_count, d.created_at, e.url,
           (SELECT ev.created_at FROM events ev WHERE ev.id = d.event_id) AS event_created_at,
           (SELECT coalesce(json_agg(json_build_object('id', s.id::text, 'secret', s.secret, 'kek_id', s.kek_id,
                      'wrapped_key', encode(s.wrapped_key, 'hex'), 'ciphertext', encode(s.ciphertext, 'hex')) ORDER BY s.id DESC), '[]')
              FROM webhook_endpoint_secrets s
              WHERE s.endpoint_id = d.endpoint_id AND (s.expires_at IS NULL OR s.expires_at > ?)) AS secrets`,
        [
          options.now,
          options.perEndpoint,
          JSON.stringify(options.inFlight ?? {}),
          options.excludeEndpoints.join(','),
          (options.excludeMerchants ?? []).join(','),
          options.perMerchant ?? options.limit,
          JSON.stringify(options.merchantInFlight ?? {}),
          options.limit,
          leaseUntil,
          options.now,
          options.now,
          options.now,
        ],
      ),
    );
    return result.rows.map((r: Record<string, unknown>) => ({
      id: String(r.id),
      eventId: r.event_id as string,
      endpointId: r.endpoint_id as string,
      merchantId: r.merchant_id as string,
      url: r.url as string,
      livemode: r.livemode as boolean,
      body: r.body as string,
      attemptCount: r.attempt_count as number,
      createdAt: r.created_at as Date,
      eventCreatedAt: (r.event_created_at as Date | null) ?? undefined,
      leaseUntil,
      secrets: (r.secrets as StoredSecretJson[]).map((j) =>
        secretRecordOf({
          id: j.id,
          secret: j.secret,
          kek_id: j.kek_id,
          wrapped_key: j.wrapped_key === null ? null : Buffer.from(j.wrapped_key, 'hex'),
          ciphertext: j.ciphertext === null ? null : Buffer.from(j.ciphertext, 'hex'),
        }),
      ),
    }));
  }

  async release(delivery: ClaimedDelivery, now: Date): Promise<boolean> {
    // Only while the lease is still ours: past it, another dispatcher may have taken the delivery (next_attempt_at moved).
    const released = await translateErrors(() =>
      this.#knex('webhook_deliveries').where({ id: delivery.id, status: 'pending', next_attempt_at: delivery.leaseUntil }).update({ next_attempt_at: now, updated_at: now }),
    );
    return released > 0;
  }

  recordAttempt(delivery: ClaimedDelivery, attempt: AttemptRecord): Promise<void> {
    if (attempt.succeeded) return translateErrors(() => this.#recordSuccess(delivery, attempt));
    return translateErrors(() =>
      this.#knex.transaction(async (trx) => {
        await trx('webhook_delivery_attempts').insert({
          delivery_id: delivery.id,
          event_id: delivery.eventId,
          endpoint_id: delivery.endpointId,
          attempted_at: attempt.attemptedAt,
          status_code: attempt.statusCode,
          error: attempt.error,
          duration_ms: attempt.durationMs,
          response_excerpt: attempt.responseExcerpt,
        });
        const status = attempt.succeeded ? 'succeeded' : attempt.nextAttemptAt ? 'pending' : 'failed';
        await trx('webhook_deliveries')
          .where({ id: delivery.id })
          // A failed attempt does not bring back a delivery given up while it was in flight (its endpoint
          // deleted or switched off): it would stay pending for ever, never claimable.
          .modify((q) => (attempt.succeeded ? q : q.andWhere({ status: 'pending' })))
          .update({
            status,
            attempt_count: trx.raw('attempt_count + 1'),
            next_attempt_at: attempt.nextAttemptAt ?? attempt.attemptedAt,
            updated_at: attempt.attemptedAt,
          });
        if (attempt.succeeded) {
          await trx('webhook_endpoints').where({ id: delivery.endpointId }).whereNotNull('failing_since').update({ failing_since: null });
        } else {
          await trx('webhook_endpoints').where({ id: delivery.endpointId }).whereNull('failing_since').update({ failing_since: attempt.attemptedAt });
          // An endpoint that has failed without a single success for the whole retry window is switched off, visibly.
          const disabled = await trx('webhook_endpoints')
            .where({ id: delivery.endpointId })
            .whereNull('disabled_reason')
            .andWhere('failing_since', '<=', attempt.disableIfFailingSince)
            .update({ disabled_reason: 'failing', updated_at: attempt.attemptedAt });
          if (disabled > 0) {
            await trx('webhook_deliveries').where({ endpoint_id: delivery.endpointId, status: 'pending' }).update({ status: 'failed', updated_at: attempt.attemptedAt });
          }
        }
      }),
    );
  }

  /**
   * A successful attempt, the common case, in one statement (atomic on its own): the attempt's row,
   * the delivery succeeded, and the endpoint no longer failing.
   */
  async #recordSuccess(delivery: ClaimedDelivery, attempt: AttemptRecord): Promise<void> {
    await this.#knex.raw(
      `WITH attempt AS (
         INSERT INTO webhook_delivery_attempts (delivery_id, event_id, endpoint_id, attempted_at, status_code, error, duration_ms, response_excerpt)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ), delivery AS (
         UPDATE webhook_deliveries SET status = 'succeeded', attempt_count = attempt_count + 1, next_attempt_at = ?, updated_at = ? WHERE id = ?
       )
       UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL`,
      [
        delivery.id,
        delivery.eventId,
        delivery.endpointId,
        attempt.attemptedAt,
        attempt.statusCode,
        attempt.error,
        attempt.durationMs,
        attempt.responseExcerpt,
        attempt.nextAttemptAt ?? attempt.attemptedAt,
        attempt.attemptedAt,
        delivery.id,
        delivery.endpointId,
      ],
    );
  }

  async requeueEvent(scope: Scope, eventId: string, endpointId: string | undefined, now: Date): Promise<number> {
    return translateErrors(async () => {
      const row = await this.#knex<EventRow>('events').where({ id: eventId, merchant_id: scope.merchantId, livemode: scope.livemode }).first();
      if (!row) return 0;
      return this.#queue(rowToEvent(row), endpointId, now);
    });
  }

  async replaySince(scope: Scope, endpointId: string, since: Date, now: Date): Promise<number> {
    return translateErrors(async () => {
      const rows = await this.#knex<EventRow>('events')
        .where({ merchant_id: scope.merchantId, livemode: scope.livemode })
        .andWhere('created_at', '>=', since)
        .orderBy([{ column: 'created_at' }, { column: 'id' }]);
      let queued = 0;
      for (const row of rows) queued += await this.#queue(rowToEvent(row), endpointId, now);
      return queued;
    });
  }

  /** Inserts or resets deliveries of one event to one endpoint (or every subscribed one). */
  async #queue(event: DomainEvent, endpointId: string | undefined, now: Date): Promise<number> {
    const result = await this.#knex.raw(
      `INSERT INTO webhook_deliveries (event_id, endpoint_id, merchant_id, livemode, body, status, attempt_count, next_attempt_at, created_at, updated_at)
       SELECT ?, e.id, e.merchant_id, e.livemode, ?, 'pending', 0, ?, ?, ?
       FROM webhook_endpoints e
       WHERE e.merchant_id = ? AND e.livemode = ? AND ${DELIVERABLE} AND ${endpointId ? 'e.id = ?' : SUBSCRIBED}
       ON CONFLICT (event_id, endpoint_id) DO UPDATE SET status = 'pending', attempt_count = 0, next_attempt_at = EXCLUDED.next_attempt_at, created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at`,
      [event.id, webhookBody(event), now, now, now, event.merchantId, event.livemode, endpointId ?? event.type],
    );
    return result.rowCount ?? 0;
  }

  async listAttempts(scope: Scope, eventId: string): Promise<DeliveryAttemptView[]> {
    const rows = await translateErrors(() =>
      this.#knex('webhook_delivery_attempts as a')
        .join('webhook_deliveries as d', 'd.id', 'a.delivery_id')
        .where({ 'a.event_id': eventId, 'd.merchant_id': scope.merchantId, 'd.livemode': scope.livemode })
        .orderBy([{ column: 'a.attempted_at' }, { column: 'a.id' }])
        .select('a.*'),
    );
    return rows.map((r: Record<string, unknown>) => ({
      id: `wda_${r.id}`,
      eventId: r.event_id as string,
      endpointId: r.endpoint_id as string,
      attemptedAt: r.attempted_at as Date,
      statusCode: (r.status_code as number | null) ?? null,
      error: (r.error as string | null) ?? null,
      durationMs: r.duration_ms as number,
      responseExcerpt: r.response_excerpt as string,
    }));
  }

  async nextDueAt(excludeEndpoints: readonly string[] = [], excludeMerchants: readonly string[] = []): Promise<Date | undefined> {
    // Only what claimDue could take: a due delivery of a disabled or excluded (busy) endpoint
    // would otherwise make the sender loop poll without pause.
    const result = await translateErrors(() =>
      this.#knex.raw(
        `SELECT d.next_attempt_at FROM webhook_deliveries d
         JOIN webhook_endpoints e ON e.id = d.endpoint_id AND ${DELIVERABLE}
         WHERE d.status = 'pending' AND NOT (d.endpoint_id = ANY(string_to_array(?, ','))) AND NOT (d.merchant_id = ANY(string_to_array(?, ',')))
         ORDER BY d.next_attempt_at LIMIT 1`,
        [excludeEndpoints.join(','), excludeMerchants.join(',')],
      ),
    );
    return (result.rows[0]?.next_attempt_at as Date | undefined) ?? undefined;
  }
}
