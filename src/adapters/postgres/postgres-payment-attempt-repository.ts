import type { Knex } from 'knex';
import type { CardBrand } from '../../domain/payment/card.ts';
import type { DeclineCode } from '../../domain/payment/decline-code.ts';
import type { AttemptStatus, AuthenticationResult, PaymentAttempt, PaymentMethod } from '../../domain/payment/payment-attempt.entity.ts';
import type { PaymentAttemptRepository } from '../../ports/payment-attempt-repository.port.ts';
import { translateErrors } from './database.ts';

interface AttemptRow {
  id: string;
  order_id: string;
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
  created_at: Date;
  updated_at: Date;
}

function toRow(a: PaymentAttempt): AttemptRow {
  return {
    id: a.id,
    order_id: a.orderId,
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
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

function fromRow(r: AttemptRow): PaymentAttempt {
  return {
    id: r.id,
    orderId: r.order_id,
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
    const { status, decline_code, authentication, processor_ref, updated_at } = toRow(attempt);
    const updated = await translateErrors(() =>
      this.#db('payment_attempts').where({ id: attempt.id }).update({ status, decline_code, authentication, processor_ref, updated_at }),
    );
    if (updated !== 1) throw new Error(`payment attempt ${attempt.id} not found`);
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
