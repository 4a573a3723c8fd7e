import type { Knex } from 'knex';
import type { MerchantEvidence } from '../../domain/evidence.ts';
import type { EvidenceRepository } from '../../ports/evidence-repository.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

interface EvidenceRow {
  customer_email: string | null;
  customer_name: string | null;
  shipping_carrier: string | null;
  tracking_number: string | null;
  delivered_at: Date | null;
  product_description: string | null;
  notes: string | null;
  updated_at: Date;
}

function fromRow(row: EvidenceRow): { evidence: MerchantEvidence; updatedAt: Date } {
  return {
    evidence: {
      customer_email: row.customer_email,
      customer_name: row.customer_name,
      shipping_carrier: row.shipping_carrier,
      tracking_number: row.tracking_number,
      delivered_at: row.delivered_at ? new Date(row.delivered_at) : null,
      product_description: row.product_description,
      notes: row.notes,
    },
    updatedAt: new Date(row.updated_at),
  };
}

/** EvidenceRepository on the order_evidence table (migration 014): one row per order. */
export class PostgresEvidenceRepository implements EvidenceRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  async find(orderId: string): Promise<{ evidence: MerchantEvidence; updatedAt: Date } | undefined> {
    const row = await translateErrors(() => this.#db('order_evidence').where({ order_id: orderId }).first<EvidenceRow | undefined>());
    return row ? fromRow(row) : undefined;
  }

  async lock(orderId: string): Promise<{ evidence: MerchantEvidence; updatedAt: Date } | undefined> {
    const row = await translateErrors(() => this.#db('order_evidence').where({ order_id: orderId }).forUpdate().first());
    return row ? fromRow(row) : undefined;
  }

  save(order: { readonly id: string; readonly merchantId: string; readonly livemode: boolean }, evidence: MerchantEvidence, now: Date): Promise<void> {
    return translateErrors(async () => {
      await this.#db('order_evidence')
        .insert({ order_id: order.id, merchant_id: order.merchantId, livemode: order.livemode, ...evidence, updated_at: now })
        .onConflict('order_id')
        .merge();
    });
  }
}
