import type { Knex } from 'knex';
import type { CardBrand } from '../../domain/payment/card.ts';
import type { DeclineCode } from '../../domain/payment/decline-code.ts';
import type { AttemptStatus, AuthenticationResult, CancellationReason, PaymentAttempt, PaymentMethod } from '../../domain/payment/payment-attempt.entity.ts';
import type { AttemptTally } from '../../domain/payment/velocity.ts';
import type { PaymentAttemptRepository, TallyScope } from '../../ports/payment-attempt-repository.port.ts';
import { translateErrors } from './database.ts';

interface AttemptRow {
  id: string;
  order_id: string;
  merchant_id: string;
  livemode: boolean;
  submission_id: string | null;
  method: string;
  route: string;
  status: string;
  decline_code: string | null;
  authentication: string;
  card_brand: string | null;
  card_last4: string | null;
  retry: boolean;
  processor_ref: string | null;
  cancellation_reason: string | null;
  challenge_test_code: string | null;
  client_address: string | null;
  created_at: Date;
  updated_at: Date;
}

function toRow(a: PaymentAttempt): AttemptRow {
  return {
    id: a.id,
    order_id: a.orderId,
    merchant_id: a.merchantId,
    livemode: a.livemode,
    submission_id: a.submissionId,
    method: a.method,
    route: a.route,
    status: a.status,
    decline_code: a.declineCode,
    authentication: a.authentication,
    card_brand: a.cardBrand,
    card_last4: a.cardLast4,
    retry: a.retry,
    processor_ref: a.processorRef,
    cancellation_reason: a.cancellationReason,
    challenge_test_code: a.challengeTestCode,
    client_address: a.clientAddress,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

function fromRow(r: AttemptRow): PaymentAttempt {
  return {
    id: r.id,
    orderId: r.order_id,
    merchantId: r.merchant_id,
    livemode: r.livemode,
    submissionId: r.submission_id,
    method: r.method as PaymentMethod,
    route: r.route,
    status: r.status as AttemptStatus,
    declineCode: r.decline_code as DeclineCode | null,
    authentication: r.authentication as AuthenticationResult,
    cardBrand: r.card_brand as CardBrand | null,
    cardLast4: r.card_last4,
    retry: r.retry,
    processorRef: r.processor_ref,
    cancellationReason: r.cancellation_reason as CancellationReason | null,
    challengeTestCode: r.challenge_test_code,
    clientAddress: r.client_address,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Payment attempts on Postgres; the unique index on succeeded attempts makes a second capture impossible. */
export class PostgresPaymentAttemptRepository implements PaymentAttemptRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  async insert(attempt: PaymentAttempt): Promise<void> {
    await translateErrors(() => this.#db('payment_attempts').insert(toRow(attempt)));
  }

  async recordOutcome(attempt: PaymentAttempt): Promise<void> {
    const { status, decline_code, authentication, processor_ref, cancellation_reason, challenge_test_code, updated_at } = toRow(attempt);
    const updated = await translateErrors(() =>
      this.#db('payment_attempts')
        .where({ id: attempt.id })
        .update({ status, decline_code, authentication, processor_ref, cancellation_reason, challenge_test_code, updated_at }),
    );
    if (updated !== 1) throw new Error(`payment attempt ${attempt.id} not found`);
  }

  async tally(scope: TallyScope, since: Date): Promise<AttemptTally> {
    const row = await translateErrors(() => {
      const q = this.#db('payment_attempts')
        .select(this.#db.raw('count(*)::int AS attempts'), this.#db.raw(`count(*) FILTER (WHERE (status = 'failed' AND decline_code IS NOT NULL) OR status = 'processing')::int AS declines`))
        .where('created_at', '>', since)
        .andWhere({ retry: false });
      if ('clientAddress' in scope) q.andWhere({ client_address: scope.clientAddress });
      else q.andWhere({ merchant_id: scope.merchantId, livemode: scope.livemode });
      return q.first() as Promise<{ attempts: number; declines: number }>;
    });
    return { attempts: row.attempts, declines: row.declines };
  }

  async serialiseTally(scope: TallyScope): Promise<void> {
    const key = 'clientAddress' in scope ? `velocity:address:${scope.clientAddress}` : `velocity:merchant:${scope.merchantId}:${scope.livemode}`;
    // A transaction-scoped advisory lock: released by the commit that makes this reservation's attempt visible.
    await translateErrors(() => this.#db.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [key]));
  }

  async claimUnsettled(before: { processing: Date; reversal: Date }, now: Date, limit: number): Promise<PaymentAttempt[]> {
    const rows = await translateErrors(() =>
      this.#db<AttemptRow>('payment_attempts')
        .where((q) => q.where({ status: 'processing' }).andWhere('updated_at', '<', before.processing))
        .orWhere((q) => q.where({ status: 'reversal_pending' }).andWhere('updated_at', '<', before.reversal))
        .orderBy('updated_at')
        .limit(limit)
        .forUpdate()
        .skipLocked(),
    );
    if (rows.length === 0) return [];
    // Taking them renews updated_at: another sweeper skips them until they are stale again.
    await translateErrors(() =>
      this.#db('payment_attempts')
        .whereIn(
          'id',
          rows.map((r) => r.id),
        )
        .update({ updated_at: now }),
    );
    return rows.map((r) => fromRow({ ...r, updated_at: now }));
  }

  async findBySubmission(orderId: string, submissionId: string): Promise<PaymentAttempt[]> {
    const rows = await translateErrors(() =>
      this.#db<AttemptRow>('payment_attempts').where({ order_id: orderId, submission_id: submissionId }).orderBy([{ column: 'retry' }, { column: 'created_at' }]),
    );
    return rows.map(fromRow);
  }

  async findById(orderId: string, attemptId: string): Promise<PaymentAttempt | undefined> {
    const row = await translateErrors(() => this.#db<AttemptRow>('payment_attempts').where({ order_id: orderId, id: attemptId }).first());
    return row ? fromRow(row) : undefined;
  }

  async listForOrder(orderId: string): Promise<PaymentAttempt[]> {
    return (await this.listForOrders([orderId])).get(orderId) ?? [];
  }

  async listForOrders(orderIds: readonly string[]): Promise<Map<string, PaymentAttempt[]>> {
    const byOrder = new Map<string, PaymentAttempt[]>();
    if (orderIds.length === 0) return byOrder;
    const rows = await translateErrors(() =>
      this.#db<AttemptRow>('payment_attempts')
        .whereIn('order_id', orderIds)
        .orderBy([{ column: 'created_at' }, { column: 'retry' }, { column: 'id' }]),
    );
    for (const row of rows) {
      const list = byOrder.get(row.order_id) ?? [];
      list.push(fromRow(row));
      byOrder.set(row.order_id, list);
    }
    return byOrder;
  }
}
