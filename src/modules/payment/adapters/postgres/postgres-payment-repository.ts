import type { Knex } from 'knex';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { CardBrand } from '../../domain/card.ts';
import type { DeclineCode } from '../../domain/decline-code.ts';
import type { AttemptStatus, AuthenticationResult, CancellationReason, ChallengeRedirect, PaymentAttempt, PaymentMethod } from '../../domain/payment-attempt.entity.ts';
import type { Payment, PaymentChange, PaymentRecord, PaymentStatus } from '../../domain/payment.entity.ts';
import type { AttemptTally } from '../../domain/velocity.ts';
import type { PaymentRepository, TallyScope } from '../../ports/payment-repository.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

interface PaymentRow {
  id: string;
  order_id: string;
  merchant_id: string;
  livemode: boolean;
  method: string;
  amount: string;
  currency: string;
  status: string;
  submission_id: string | null;
  client_address: string | null;
  capture_ref: string | null;
  captured_amount: string | null;
  captured_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

interface AttemptRow {
  id: string;
  payment_id: string;
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
  /** jsonb: written as its JSON text, read back parsed. */
  challenge_redirect?: ChallengeRedirect | string | null;
  client_address: string | null;
  saved_card_id?: string | null;
  created_at: Date;
  updated_at: Date;
}

function paymentToRow(p: Payment): PaymentRow {
  return {
    id: p.id,
    order_id: p.orderId,
    merchant_id: p.merchantId,
    livemode: p.livemode,
    method: p.method,
    amount: p.amount.toString(),
    currency: p.currency,
    status: p.status,
    submission_id: p.submissionId,
    client_address: p.clientAddress,
    capture_ref: p.capture?.processorRef ?? null,
    captured_amount: p.capture?.amount.toString() ?? null,
    captured_at: p.capture?.capturedAt ?? null,
    created_at: p.createdAt,
    updated_at: p.updatedAt,
  };
}

function rowToPayment(r: PaymentRow): Payment {
  return {
    id: r.id,
    orderId: r.order_id,
    merchantId: r.merchant_id,
    livemode: r.livemode,
    method: r.method as PaymentMethod,
    amount: BigInt(r.amount),
    currency: r.currency.trim(),
    status: r.status as PaymentStatus,
    submissionId: r.submission_id,
    clientAddress: r.client_address,
    capture: r.capture_ref && r.captured_amount && r.captured_at ? { processorRef: r.capture_ref, amount: BigInt(r.captured_amount), capturedAt: r.captured_at } : null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

function attemptToRow(a: PaymentAttempt): AttemptRow {
  return {
    id: a.id,
    payment_id: a.paymentId,
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
    challenge_redirect: a.challengeRedirect ? JSON.stringify(a.challengeRedirect) : null,
    client_address: a.clientAddress,
    saved_card_id: a.savedCardId ?? null,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}

function rowToAttempt(r: AttemptRow): PaymentAttempt {
  return {
    id: r.id,
    paymentId: r.payment_id,
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
    challengeRedirect: typeof r.challenge_redirect === 'string' ? (JSON.parse(r.challenge_redirect) as ChallengeRedirect) : (r.challenge_redirect ?? null),
    clientAddress: r.client_address,
    savedCardId: r.saved_card_id ?? null,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

const PAYMENT_COLUMNS = [
  'id', 'order_id', 'merchant_id', 'livemode', 'method', 'amount', 'currency', 'status', 'submission_id', 'client_address',
  'capture_ref', 'captured_amount', 'captured_at', 'created_at', 'updated_at',
] as const satisfies ReadonlyArray<keyof PaymentRow>;

/** A payment's columns beside its attempt's in one row (`a.*`): each as "p_<column>". */
const PAYMENT_SELECT = PAYMENT_COLUMNS.map((c) => `p.${c} AS p_${c}`).join(', ');

function joinedPayment(row: Record<string, unknown>): PaymentRow {
  const payment: Record<string, unknown> = {};
  for (const column of PAYMENT_COLUMNS) payment[column] = row[`p_${column}`];
  return payment as unknown as PaymentRow;
}

/** Rows of payments LEFT JOIN their attempts, in order: the records, attempts in the rows' order. */
function recordsOf(rows: ReadonlyArray<Record<string, unknown>>): PaymentRecord[] {
  const records = new Map<string, { payment: Payment; attempts: PaymentAttempt[] }>();
  for (const row of rows) {
    const id = row.p_id as string;
    let record = records.get(id);
    if (!record) records.set(id, (record = { payment: rowToPayment(joinedPayment(row)), attempts: [] }));
    if (row.id !== null) record.attempts.push(rowToAttempt(row as unknown as AttemptRow));
  }
  return [...records.values()];
}

/** Which columns of the leg a kind of change writes (besides status and updated_at). */
type LegColumns = ReadonlyArray<keyof AttemptRow>;

/**
 * Payments and their attempts on Postgres. Each named change writes the
 * payment's status (and capture) and exactly the leg's columns it is about;
 * unique indexes admit one succeeded payment per order and one payment per
 * submission, whatever races (a loser gets a ConflictError).
 */
export class PostgresPaymentRepository implements PaymentRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  /** The payment and its first attempt in one statement (atomic on its own): one round trip, not two. */
  async start(change: PaymentChange): Promise<void> {
    await translateErrors(async () => {
      const payment = this.#db('payments').insert(paymentToRow(change.payment)).toSQL();
      const leg = this.#db('payment_attempts').insert(attemptToRow(change.leg)).toSQL();
      await this.#db.raw(`WITH p AS (${payment.sql}) ${leg.sql}`, [...payment.bindings, ...leg.bindings]);
    });
  }

  async retryOnAlternative(change: PaymentChange & { readonly failedLeg: PaymentAttempt }): Promise<void> {
    await translateErrors(async () => {
      await this.#writeLeg(change.failedLeg, ['decline_code']);
      await this.#db('payment_attempts').insert(attemptToRow(change.leg));
      await this.#writePayment(change.payment);
    });
  }

  recordChallenge(change: PaymentChange): Promise<void> {
    return this.#save(change, ['authentication', 'processor_ref', 'challenge_test_code', 'challenge_redirect']);
  }

  claimChallenge(change: PaymentChange): Promise<void> {
    return this.#save(change, []);
  }

  recordAuthorization(change: PaymentChange): Promise<void> {
    return this.#save(change, ['processor_ref']);
  }

  markAuthorized(change: PaymentChange): Promise<void> {
    return this.#save(change, ['authentication', 'decline_code']);
  }

  markCaptured(change: PaymentChange): Promise<void> {
    return this.#save(change, ['processor_ref', 'authentication', 'decline_code'], true);
  }

  recordDecline(change: PaymentChange): Promise<void> {
    return this.#save(change, ['decline_code', 'authentication']);
  }

  cancel(change: PaymentChange): Promise<void> {
    return this.#save(change, ['cancellation_reason']);
  }

  holdForReversal(change: PaymentChange): Promise<void> {
    return this.#save(change, ['processor_ref', 'cancellation_reason', 'authentication'], true);
  }

  markReversed(change: PaymentChange): Promise<void> {
    return this.#save(change, []);
  }

  /** The attempt and its payment in one statement (atomic on its own): one round trip, not two. */
  async #save(change: PaymentChange, legColumns: LegColumns, withCapture = false): Promise<void> {
    await translateErrors(async () => {
      const leg = attemptToRow(change.leg);
      const legValues: Record<string, unknown> = { status: leg.status, updated_at: leg.updated_at };
      for (const column of legColumns) legValues[column] = leg[column];
      const payment = paymentToRow(change.payment);
      const paymentValues: Record<string, unknown> = { status: payment.status, updated_at: payment.updated_at };
      if (withCapture) Object.assign(paymentValues, { capture_ref: payment.capture_ref, captured_amount: payment.captured_amount, captured_at: payment.captured_at });
      const set = (values: Record<string, unknown>) => Object.keys(values).map(() => '?? = ?').join(', ');
      const pairs = (values: Record<string, unknown>) => Object.entries(values).flat();
      const result = await this.#db.raw(
        // The payment changes only with its attempt: without a transaction around it (runAlone), a missing
        // attempt must leave nothing written.
        `WITH leg AS (UPDATE payment_attempts SET ${set(legValues)} WHERE id = ? RETURNING 1),
              pay AS (UPDATE payments SET ${set(paymentValues)} WHERE id = ? AND EXISTS (SELECT 1 FROM leg) RETURNING 1)
         SELECT (SELECT count(*) FROM leg)::int AS legs, (SELECT count(*) FROM pay)::int AS payments`,
        [...pairs(legValues), change.leg.id, ...pairs(paymentValues), change.payment.id] as Knex.RawBinding[],
      );
      const counts = result.rows[0] as { legs: number; payments: number };
      if (counts.legs !== 1) throw new Error(`payment attempt ${change.leg.id} not found`);
      if (counts.payments !== 1) throw new Error(`payment ${change.payment.id} not found`);
    });
  }

  async #writeLeg(leg: PaymentAttempt, columns: LegColumns): Promise<void> {
    const row = attemptToRow(leg);
    const values: Partial<AttemptRow> = { status: row.status, updated_at: row.updated_at };
    for (const column of columns) (values as Record<string, unknown>)[column] = row[column];
    const updated = await this.#db('payment_attempts').where({ id: leg.id }).update(values);
    if (updated !== 1) throw new Error(`payment attempt ${leg.id} not found`);
  }

  async #writePayment(payment: Payment): Promise<void> {
    const row = paymentToRow(payment);
    const updated = await this.#db('payments').where({ id: payment.id }).update({ status: row.status, updated_at: row.updated_at });
    if (updated !== 1) throw new Error(`payment ${payment.id} not found`);
  }

  async findById(scope: Scope, paymentId: string): Promise<PaymentRecord | undefined> {
    const rows = await this.#records('p.id = ? AND p.merchant_id = ? AND p.livemode = ?', [paymentId, scope.merchantId, scope.livemode], 'a.retry, a.created_at');
    return rows[0];
  }

  async findByAttempt(orderId: string, attemptId: string): Promise<PaymentChange | undefined> {
    return translateErrors(async () => {
      const result = await this.#db.raw<{ rows: Record<string, unknown>[] }>(
        `SELECT a.*, ${PAYMENT_SELECT} FROM payment_attempts a JOIN payments p ON p.id = a.payment_id WHERE a.order_id = ? AND a.id = ?`,
        [orderId, attemptId],
      );
      const row = result.rows[0];
      return row ? { payment: rowToPayment(joinedPayment(row)), leg: rowToAttempt(row as unknown as AttemptRow) } : undefined;
    });
  }

  async findBySubmission(orderId: string, submissionId: string): Promise<PaymentRecord | undefined> {
    const rows = await this.#records('p.order_id = ? AND p.submission_id = ?', [orderId, submissionId], 'a.retry, a.created_at');
    return rows[0];
  }

  listForOrder(orderId: string): Promise<PaymentRecord[]> {
    return this.#records('p.order_id = ?', [orderId], 'a.created_at, a.retry, a.id');
  }

  /** Payments and their attempts in one query (a payment's columns prefixed p_). */
  #records(where: string, bindings: readonly Knex.RawBinding[], attemptOrder: string): Promise<PaymentRecord[]> {
    return translateErrors(async () => {
      const result = await this.#db.raw<{ rows: Record<string, unknown>[] }>(
        `SELECT ${PAYMENT_SELECT}, a.* FROM payments p LEFT JOIN payment_attempts a ON a.payment_id = p.id WHERE ${where} ORDER BY p.created_at, p.id, ${attemptOrder}`,
        bindings,
      );
      return recordsOf(result.rows);
    });
  }

  async listAttemptsForOrders(orderIds: readonly string[]): Promise<Map<string, PaymentAttempt[]>> {
    const byOrder = new Map<string, PaymentAttempt[]>();
    if (orderIds.length === 0) return byOrder;
    const rows = await translateErrors(() =>
      this.#db<AttemptRow>('payment_attempts')
        .whereIn('order_id', orderIds)
        .orderBy([{ column: 'created_at' }, { column: 'retry' }, { column: 'id' }]),
    );
    for (const row of rows) {
      const list = byOrder.get(row.order_id) ?? [];
      list.push(rowToAttempt(row));
      byOrder.set(row.order_id, list);
    }
    return byOrder;
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

  async claimUnsettled(before: { processing: Date; reversal: Date }, now: Date, limit: number): Promise<PaymentChange[]> {
    return translateErrors(async () => {
      const legs = await this.#db<AttemptRow>('payment_attempts')
        .where((q) => q.where({ status: 'processing' }).andWhere('updated_at', '<', before.processing))
        .orWhere((q) => q.where({ status: 'reversal_pending' }).andWhere('updated_at', '<', before.reversal))
        .orderBy('updated_at')
        .limit(limit)
        .forUpdate()
        .skipLocked();
      if (legs.length === 0) return [];
      // Taking them renews updated_at: another sweeper skips them until they are stale again.
      const ids = legs.map((leg) => leg.id);
      await this.#db('payment_attempts').whereIn('id', ids).update({ updated_at: now });
      const payments = await this.#db<PaymentRow>('payments').whereIn(
        'id',
        legs.map((leg) => leg.payment_id),
      );
      const byId = new Map(payments.map((row) => [row.id, rowToPayment(row)]));
      return legs.map((leg) => ({ payment: byId.get(leg.payment_id)!, leg: rowToAttempt({ ...leg, updated_at: now }) }));
    });
  }
}
