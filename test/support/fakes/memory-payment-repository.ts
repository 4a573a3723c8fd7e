import type { Scope } from '../../../src/kernel/domain/caller.ts';
import type { PaymentAttempt } from '../../../src/modules/payment/domain/payment-attempt.entity.ts';
import type { Payment, PaymentChange, PaymentRecord } from '../../../src/modules/payment/domain/payment.entity.ts';
import type { AttemptTally } from '../../../src/modules/payment/domain/velocity.ts';
import type { PaymentRepository, TallyScope } from '../../../src/modules/payment/ports/payment-repository.port.ts';
import { ConflictError } from '../../../src/kernel/ports/errors.ts';
import type { MemoryTables, TablesRef } from './memory-tables.ts';

type LegField = keyof PaymentAttempt;

/** A leg as payment_attempts gives it back: its optional fields present, null when unset. */
export function asStoredLeg(leg: PaymentAttempt): PaymentAttempt {
  return { ...leg, savedCardId: leg.savedCardId ?? null, challengeRedirect: leg.challengeRedirect ?? null };
}

const byTime = <T extends { createdAt: Date; id: string }>(a: T, b: T) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
/** A leg's place in its record: first leg first (the retry after it), then by time. */
const legOrder = (a: PaymentAttempt, b: PaymentAttempt) => Number(a.retry) - Number(b.retry) || byTime(a, b);
/** The order's attempts: by time, then first leg before retry, then id (listForOrder, listAttemptsForOrders). */
const orderAttemptOrder = (a: PaymentAttempt, b: PaymentAttempt) => a.createdAt.getTime() - b.createdAt.getTime() || Number(a.retry) - Number(b.retry) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The unique indexes of payments and payment_attempts: one success per order, one payment per submission. */
function checkUnique(tables: MemoryTables, payment: Payment, leg: PaymentAttempt): void {
  for (const other of tables.payments.values()) {
    if (other.id === payment.id || other.orderId !== payment.orderId) continue;
    if (payment.status === 'succeeded' && other.status === 'succeeded') throw new ConflictError('The order has been paid by another payment.');
    if (payment.submissionId !== null && other.submissionId === payment.submissionId) throw new ConflictError('This payment submission is already being processed.');
  }
  for (const other of tables.attempts.values()) {
    if (other.id === leg.id || other.orderId !== leg.orderId) continue;
    if (leg.status === 'succeeded' && other.status === 'succeeded') throw new ConflictError('The order has been paid by another payment.');
    if (leg.submissionId !== null && other.submissionId === leg.submissionId && other.retry === leg.retry) throw new ConflictError('This payment submission is already being processed.');
  }
}

/** PaymentRepository in memory: each named change writes the payment's status (and capture) and exactly its leg's fields. */
export class MemoryPaymentRepository implements PaymentRepository {
  readonly #tables: TablesRef;

  constructor(tables: TablesRef) {
    this.#tables = tables;
  }

  async start(change: PaymentChange): Promise<void> {
    const tables = this.#tables();
    if (tables.payments.has(change.payment.id) || tables.attempts.has(change.leg.id)) throw new ConflictError('The change conflicts with one made at the same time.');
    if (!tables.orders.has(change.payment.orderId)) throw new Error(`payment ${change.payment.id}: no order ${change.payment.orderId} (foreign key)`);
    checkUnique(tables, change.payment, change.leg);
    tables.payments.set(change.payment.id, change.payment);
    tables.attempts.set(change.leg.id, asStoredLeg(change.leg));
  }

  async retryOnAlternative(change: PaymentChange & { readonly failedLeg: PaymentAttempt }): Promise<void> {
    const tables = this.#tables();
    const failed = tables.attempts.get(change.failedLeg.id);
    if (!failed) throw new Error(`payment attempt ${change.failedLeg.id} not found`);
    const payment = tables.payments.get(change.payment.id);
    if (!payment) throw new Error(`payment ${change.payment.id} not found`);
    if (tables.attempts.has(change.leg.id)) throw new ConflictError('The change conflicts with one made at the same time.');
    checkUnique(tables, payment, change.leg);
    tables.attempts.set(failed.id, { ...failed, status: change.failedLeg.status, declineCode: change.failedLeg.declineCode, updatedAt: change.failedLeg.updatedAt });
    tables.attempts.set(change.leg.id, asStoredLeg(change.leg));
    tables.payments.set(payment.id, { ...payment, status: change.payment.status, updatedAt: change.payment.updatedAt });
  }

  recordChallenge(change: PaymentChange): Promise<void> {
    return this.#save(change, ['authentication', 'processorRef', 'challengeTestCode', 'challengeRedirect']);
  }

  claimChallenge(change: PaymentChange): Promise<void> {
    return this.#save(change, []);
  }

  recordAuthorization(change: PaymentChange): Promise<void> {
    return this.#save(change, ['processorRef']);
  }

  markAuthorized(change: PaymentChange): Promise<void> {
    return this.#save(change, ['authentication', 'declineCode']);
  }

  markCaptured(change: PaymentChange): Promise<void> {
    return this.#save(change, ['processorRef', 'authentication', 'declineCode'], true);
  }

  recordDecline(change: PaymentChange): Promise<void> {
    return this.#save(change, ['declineCode', 'authentication']);
  }

  cancel(change: PaymentChange): Promise<void> {
    return this.#save(change, ['cancellationReason']);
  }

  holdForReversal(change: PaymentChange): Promise<void> {
    return this.#save(change, ['processorRef', 'cancellationReason', 'authentication'], true);
  }

  markReversed(change: PaymentChange): Promise<void> {
    return this.#save(change, []);
  }

  /** The leg and its payment together, or neither (one statement in Postgres). */
  async #save(change: PaymentChange, fields: readonly LegField[], withCapture = false): Promise<void> {
    const tables = this.#tables();
    const leg = tables.attempts.get(change.leg.id);
    if (!leg) throw new Error(`payment attempt ${change.leg.id} not found`);
    const payment = tables.payments.get(change.payment.id);
    if (!payment) throw new Error(`payment ${change.payment.id} not found`);
    const newLeg: Record<string, unknown> = { ...leg, status: change.leg.status, updatedAt: change.leg.updatedAt };
    for (const field of fields) newLeg[field] = change.leg[field] ?? null;
    const newPayment: Payment = { ...payment, status: change.payment.status, updatedAt: change.payment.updatedAt, ...(withCapture ? { capture: change.payment.capture } : {}) };
    checkUnique(tables, newPayment, newLeg as unknown as PaymentAttempt);
    tables.attempts.set(leg.id, newLeg as unknown as PaymentAttempt);
    tables.payments.set(payment.id, newPayment);
  }

  #record(payment: Payment, order: (a: PaymentAttempt, b: PaymentAttempt) => number): PaymentRecord {
    const attempts = [...this.#tables().attempts.values()].filter((a) => a.paymentId === payment.id).sort(order);
    return { payment, attempts };
  }

  async findById(scope: Scope, paymentId: string): Promise<PaymentRecord | undefined> {
    const payment = this.#tables().payments.get(paymentId);
    if (!payment || payment.merchantId !== scope.merchantId || payment.livemode !== scope.livemode) return undefined;
    return this.#record(payment, legOrder);
  }

  async findByAttempt(orderId: string, attemptId: string): Promise<PaymentChange | undefined> {
    const tables = this.#tables();
    const leg = tables.attempts.get(attemptId);
    if (!leg || leg.orderId !== orderId) return undefined;
    return { payment: tables.payments.get(leg.paymentId)!, leg };
  }

  async findBySubmission(orderId: string, submissionId: string): Promise<PaymentRecord | undefined> {
    const payment = [...this.#tables().payments.values()].find((p) => p.orderId === orderId && p.submissionId === submissionId);
    return payment && this.#record(payment, legOrder);
  }

  async listForOrder(orderId: string): Promise<PaymentRecord[]> {
    return [...this.#tables().payments.values()]
      .filter((p) => p.orderId === orderId)
      .sort(byTime)
      .map((p) => this.#record(p, orderAttemptOrder));
  }

  async listAttemptsForOrders(orderIds: readonly string[]): Promise<Map<string, PaymentAttempt[]>> {
    const byOrder = new Map<string, PaymentAttempt[]>();
    const wanted = new Set(orderIds);
    for (const attempt of [...this.#tables().attempts.values()].sort(orderAttemptOrder)) {
      if (!wanted.has(attempt.orderId)) continue;
      byOrder.set(attempt.orderId, [...(byOrder.get(attempt.orderId) ?? []), attempt]);
    }
    return byOrder;
  }

  async tally(scope: TallyScope, since: Date): Promise<AttemptTally> {
    const counted = [...this.#tables().attempts.values()].filter(
      (a) =>
        a.createdAt.getTime() > since.getTime() &&
        !a.retry &&
        ('clientAddress' in scope ? a.clientAddress === scope.clientAddress : a.merchantId === scope.merchantId && a.livemode === scope.livemode),
    );
    return { attempts: counted.length, declines: counted.filter((a) => (a.status === 'failed' && a.declineCode !== null) || a.status === 'processing').length };
  }

  async serialiseTally(_scope: TallyScope): Promise<void> {
    // One transaction at a time already (the in-memory unit of work).
  }

  async claimUnsettled(before: { readonly processing: Date; readonly reversal: Date }, now: Date, limit: number): Promise<PaymentChange[]> {
    const tables = this.#tables();
    const legs = [...tables.attempts.values()]
      .filter(
        (a) =>
          (a.status === 'processing' && a.updatedAt.getTime() < before.processing.getTime()) ||
          (a.status === 'reversal_pending' && a.updatedAt.getTime() < before.reversal.getTime()),
      )
      .sort((a, b) => a.updatedAt.getTime() - b.updatedAt.getTime())
      .slice(0, limit);
    return legs.map((leg) => {
      const renewed = { ...leg, updatedAt: now };
      tables.attempts.set(leg.id, renewed);
      return { payment: tables.payments.get(leg.paymentId)!, leg: renewed };
    });
  }
}
