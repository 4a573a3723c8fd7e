import type { Knex } from 'knex';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { Dispute, DisputeReason, DisputeSource, DisputeStatus, MerchantBalance } from '../../domain/dispute.entity.ts';
import type { Evidence } from '../../domain/evidence.ts';
import { evidenceJson } from '../../domain/evidence.ts';
import type { DisputePage, DisputeRepository } from '../../ports/dispute-repository.port.ts';
import { UnknownCursorError } from '../../../../kernel/ports/errors.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

interface DisputeRow {
  id: string;
  order_id: string;
  payment_id: string;
  merchant_id: string;
  livemode: boolean;
  reference: string;
  amount: string;
  currency: string;
  reason: string;
  status: string;
  evidence_due_by: Date;
  submitted_evidence: { order_id: string; updated: string | null; merchant: Record<string, string | null>; service: Record<string, string | null> } | null;
  submission_count: number;
  withdrawn_amount: string;
  withdrawn_currency: string;
  withdrawn_from: string;
  fee_amount: string;
  fee_currency: string;
  source: string;
  version: number;
  created_at: Date;
  closed_at: Date | null;
}

const dateOrNull = (value: string | null | undefined) => (value ? new Date(value) : null);

/** The stored JSON of submitted evidence back to the domain's shape. */
function evidenceFromJson(json: NonNullable<DisputeRow['submitted_evidence']>): Evidence {
  const m = json.merchant;
  const s = json.service;
  return {
    orderId: json.order_id,
    updatedAt: dateOrNull(json.updated),
    merchant: {
      customer_email: m.customer_email ?? null,
      customer_name: m.customer_name ?? null,
      shipping_carrier: m.shipping_carrier ?? null,
      tracking_number: m.tracking_number ?? null,
      delivered_at: dateOrNull(m.delivered_at),
      product_description: m.product_description ?? null,
      notes: m.notes ?? null,
    },
    service: {
      authentication: s.authentication ?? null,
      paidAt: dateOrNull(s.paid_at),
      customerIp: s.customer_ip ?? null,
      receiptUrl: s.receipt_url ?? '',
      cardBrand: s.card_brand ?? null,
      cardLast4: s.card_last4 ?? null,
    },
  };
}

function fromRow(row: DisputeRow): Dispute {
  return {
    id: row.id,
    orderId: row.order_id,
    paymentId: row.payment_id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    reference: row.reference,
    amount: BigInt(row.amount),
    currency: row.currency.trim(),
    reason: row.reason as DisputeReason,
    status: row.status as DisputeStatus,
    evidenceDueBy: new Date(row.evidence_due_by),
    submittedEvidence: row.submitted_evidence ? evidenceFromJson(row.submitted_evidence) : null,
    submissionCount: row.submission_count,
    withdrawn: { amount: BigInt(row.withdrawn_amount), currency: row.withdrawn_currency.trim() },
    fee: { amount: BigInt(row.fee_amount), currency: row.fee_currency.trim() },
    withdrawnFrom: row.withdrawn_from as MerchantBalance,
    source: row.source as DisputeSource,
    version: row.version,
    createdAt: new Date(row.created_at),
    closedAt: row.closed_at ? new Date(row.closed_at) : null,
  };
}

function evidenceToJson(evidence: Evidence): string {
  return JSON.stringify({ order_id: evidence.orderId, updated: evidence.updatedAt?.toISOString() ?? null, ...evidenceJson(evidence) });
}

/** DisputeRepository on the disputes table and the order's amount_disputed (migration 014). */
export class PostgresDisputeRepository implements DisputeRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  open(dispute: Dispute): Promise<void> {
    return translateErrors(async () => {
      await this.#db('disputes').insert({
        id: dispute.id,
        order_id: dispute.orderId,
        payment_id: dispute.paymentId,
        merchant_id: dispute.merchantId,
        livemode: dispute.livemode,
        reference: dispute.reference,
        amount: dispute.amount.toString(),
        currency: dispute.currency,
        reason: dispute.reason,
        status: dispute.status,
        evidence_due_by: dispute.evidenceDueBy,
        submitted_evidence: null,
        submission_count: dispute.submissionCount,
        withdrawn_amount: dispute.withdrawn.amount.toString(),
        withdrawn_currency: dispute.withdrawn.currency,
        withdrawn_from: dispute.withdrawnFrom,
        fee_amount: dispute.fee.amount.toString(),
        fee_currency: dispute.fee.currency,
        source: dispute.source,
        version: dispute.version,
        created_at: dispute.createdAt,
        updated_at: dispute.createdAt,
      });
      await this.#db('orders').where({ id: dispute.orderId }).increment('amount_disputed', Number(dispute.amount));
    });
  }

  async heldAmount(orderId: string): Promise<bigint> {
    const row = await translateErrors(() => this.#db('orders').where({ id: orderId }).first<{ amount_disputed: string } | undefined>('amount_disputed'));
    return BigInt(row?.amount_disputed ?? '0');
  }

  async lock(disputeId: string): Promise<Dispute | undefined> {
    const row = await translateErrors(() => this.#db<DisputeRow>('disputes').where({ id: disputeId }).forUpdate().first());
    return row ? fromRow(row) : undefined;
  }

  recordSubmission(dispute: Dispute, now: Date): Promise<void> {
    return translateErrors(async () => {
      const updated = await this.#db('disputes')
        .where({ id: dispute.id, status: 'needs_response' })
        .update({
          status: dispute.status,
          submitted_evidence: dispute.submittedEvidence ? evidenceToJson(dispute.submittedEvidence) : null,
          submission_count: dispute.submissionCount,
          version: dispute.version,
          updated_at: now,
        });
      if (updated !== 1) throw new Error(`dispute ${dispute.id} no longer needs a response`);
    });
  }

  recordOutcome(dispute: Dispute, now: Date): Promise<void> {
    return translateErrors(async () => {
      const updated = await this.#db('disputes')
        .where({ id: dispute.id })
        .whereIn('status', ['needs_response', 'under_review'])
        .update({ status: dispute.status, version: dispute.version, closed_at: dispute.closedAt, updated_at: now });
      if (updated !== 1) throw new Error(`dispute ${dispute.id} is no longer open`);
      // Won: the money is the merchant's again, and may be refunded. Lost: it stays taken.
      if (dispute.status === 'won') await this.#db('orders').where({ id: dispute.orderId }).decrement('amount_disputed', Number(dispute.amount));
    });
  }

  async get(disputeId: string): Promise<Dispute | undefined> {
    const row = await translateErrors(() => this.#db<DisputeRow>('disputes').where({ id: disputeId }).first());
    return row ? fromRow(row) : undefined;
  }

  async findById(scope: Scope, disputeId: string): Promise<Dispute | undefined> {
    const row = await translateErrors(() => this.#db<DisputeRow>('disputes').where({ id: disputeId, merchant_id: scope.merchantId, livemode: scope.livemode }).first());
    return row ? fromRow(row) : undefined;
  }

  async list(scope: Scope, query: { limit: number; startingAfter: string | undefined; orderId: string | undefined }): Promise<DisputePage> {
    return translateErrors(async () => {
      const q = this.#db<DisputeRow>('disputes')
        .where({ merchant_id: scope.merchantId, livemode: scope.livemode })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(query.limit + 1);
      if (query.orderId !== undefined) q.andWhere({ order_id: query.orderId });
      if (query.startingAfter !== undefined) {
        const cursor = await this.#db<DisputeRow>('disputes').select('created_at', 'id').where({ id: query.startingAfter, merchant_id: scope.merchantId, livemode: scope.livemode }).first();
        if (!cursor) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your disputes in this mode.`);
        q.andWhereRaw('(created_at, id) < (?, ?)', [cursor.created_at, cursor.id]);
      }
      const rows = await q;
      return { disputes: rows.slice(0, query.limit).map(fromRow), hasMore: rows.length > query.limit };
    });
  }

  async listForOrders(orderIds: readonly string[]): Promise<Map<string, Dispute[]>> {
    const byOrder = new Map<string, Dispute[]>();
    if (orderIds.length === 0) return byOrder;
    const rows = await translateErrors(() => this.#db<DisputeRow>('disputes').whereIn('order_id', orderIds).orderBy([{ column: 'created_at' }, { column: 'id' }]));
    for (const row of rows) {
      const list = byOrder.get(row.order_id) ?? [];
      list.push(fromRow(row));
      byOrder.set(row.order_id, list);
    }
    return byOrder;
  }

  async dueToClose(now: Date, limit: number): Promise<string[]> {
    const rows = await translateErrors(() =>
      this.#db.raw<{ rows: { id: string }[] }>(
        `SELECT id FROM disputes
         WHERE (status = 'needs_response' AND evidence_due_by < ?)
            OR (status = 'under_review' AND NOT livemode
                AND ((submitted_evidence -> 'merchant')::text LIKE '%winning\\_evidence%' OR (submitted_evidence -> 'merchant')::text LIKE '%losing\\_evidence%'))
         ORDER BY evidence_due_by LIMIT ?`,
        [now, limit],
      ),
    );
    return rows.rows.map((r) => r.id);
  }

  async dueTestCardDisputes(capturedBefore: Date, limit: number): Promise<string[]> {
    // In test mode only a sandbox's own test cards pay, and each card of a sandbox has its own last
    // four digits (src/modules/payment/domain/test-card.ts): the paying attempt's brand and last four name the card.
    const rows = await translateErrors(() =>
      this.#db.raw<{ rows: { order_id: string }[] }>(
        `SELECT o.id AS order_id
         FROM payments p
         JOIN orders o ON o.id = p.order_id
         JOIN payment_attempts a ON a.payment_id = p.id AND a.status = 'succeeded'
         JOIN test_cards c ON c.merchant_id = p.merchant_id AND c.behaviour = 'dispute' AND c.last4 = a.card_last4 AND c.brand = a.card_brand
         WHERE p.status = 'succeeded' AND NOT p.livemode AND p.method = 'card' AND p.captured_at < ?
           AND o.status IN ('paid', 'partially_refunded')
           AND o.amount - o.amount_refunded - o.amount_refund_pending - o.amount_disputed > 0
           AND NOT EXISTS (SELECT 1 FROM disputes d WHERE d.order_id = o.id AND d.source = 'test_card')
         ORDER BY p.captured_at LIMIT ?`,
        [capturedBefore, limit],
      ),
    );
    return rows.rows.map((r) => r.order_id);
  }
}
