import type { Knex } from 'knex';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { PaymentLink, PaymentLinkType } from '../../domain/payment-link.entity.ts';
import type { PaymentLinkPage, PaymentLinkRepository } from '../../ports/payment-link-repository.port.ts';
import { ConflictError, UnknownCursorError } from '../../../../kernel/ports/errors.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** The payment_links table's row (bigints as strings). */
interface PaymentLinkRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  suffix: string;
  url: string;
  type: string;
  amount: string;
  currency: string;
  reference: string;
  line_items: { name: string; amount: string }[] | string;
  return_url: string | null;
  expires_at: Date | null;
  deactivated_at: Date | null;
  completed_payments: number;
  version: number;
  created_at: Date;
}

function toRow(link: PaymentLink): PaymentLinkRow {
  return {
    id: link.id,
    merchant_id: link.merchantId,
    livemode: link.livemode,
    suffix: link.suffix,
    url: link.url,
    type: link.type,
    amount: link.amount.toString(),
    currency: link.currency,
    reference: link.reference,
    // Amounts as strings, so jsonb never holds a float.
    line_items: JSON.stringify(link.lineItems.map((item) => ({ name: item.name, amount: item.amount.toString() }))),
    return_url: link.returnUrl,
    expires_at: link.expiresAt,
    deactivated_at: link.deactivatedAt,
    completed_payments: link.completedPayments,
    version: link.version,
    created_at: link.createdAt,
  };
}

function fromRow(row: PaymentLinkRow): PaymentLink {
  if (row.type !== 'single_use' && row.type !== 'collecting') throw new Error(`payment link ${row.id} has unknown type ${row.type}`);
  const items = typeof row.line_items === 'string' ? (JSON.parse(row.line_items) as { name: string; amount: string }[]) : row.line_items;
  return {
    id: row.id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    suffix: row.suffix,
    url: row.url,
    type: row.type as PaymentLinkType,
    amount: BigInt(row.amount),
    currency: row.currency,
    reference: row.reference,
    lineItems: items.map((item) => ({ name: item.name, amount: BigInt(item.amount) })),
    returnUrl: row.return_url,
    expiresAt: row.expires_at ? new Date(row.expires_at) : null,
    deactivatedAt: row.deactivated_at ? new Date(row.deactivated_at) : null,
    completedPayments: row.completed_payments,
    version: row.version,
    createdAt: new Date(row.created_at),
  };
}

/** PaymentLinkRepository on Postgres; pass a transaction to take part in one. */
export class PostgresPaymentLinkRepository implements PaymentLinkRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  async insert(link: PaymentLink): Promise<void> {
    await translateErrors(() => this.#db('payment_links').insert(toRow(link)));
  }

  async findById(scope: Scope, id: string): Promise<PaymentLink | undefined> {
    const row = await translateErrors(() => this.#db<PaymentLinkRow>('payment_links').where({ id, merchant_id: scope.merchantId, livemode: scope.livemode }).first());
    return row ? fromRow(row) : undefined;
  }

  async list(scope: Scope, query: { limit: number; startingAfter: string | undefined }): Promise<PaymentLinkPage> {
    return translateErrors(async () => {
      const q = this.#db<PaymentLinkRow>('payment_links')
        .where({ merchant_id: scope.merchantId, livemode: scope.livemode })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(query.limit + 1);
      if (query.startingAfter !== undefined) {
        const cursor = await this.#db<PaymentLinkRow>('payment_links')
          .select('created_at', 'id')
          .where({ id: query.startingAfter, merchant_id: scope.merchantId, livemode: scope.livemode })
          .first();
        if (!cursor) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your payment links in this mode.`);
        q.andWhereRaw('(created_at, id) < (?, ?)', [cursor.created_at, cursor.id]);
      }
      const rows = await q;
      return { links: rows.slice(0, query.limit).map(fromRow), hasMore: rows.length > query.limit };
    });
  }

  async findBySuffix(suffix: string): Promise<PaymentLink | undefined> {
    const row = await translateErrors(() => this.#db<PaymentLinkRow>('payment_links').where({ suffix }).first());
    return row ? fromRow(row) : undefined;
  }

  async lock(id: string): Promise<PaymentLink | undefined> {
    const row = await translateErrors(() => this.#db<PaymentLinkRow>('payment_links').where({ id }).forUpdate().first());
    return row ? fromRow(row) : undefined;
  }

  async hasPaymentInFlight(linkId: string, exceptOrderId: string): Promise<boolean> {
    // By status alone, however old: an attempt a crashed process left "processing" holds the link
    // until the sweeper settles it, since it may yet capture.
    const row = await translateErrors(() =>
      this.#db('orders as o')
        .join('payment_attempts as a', 'a.order_id', 'o.id')
        .where('o.payment_link_id', linkId)
        .andWhereNot('o.id', exceptOrderId)
        .whereIn('a.status', ['processing', 'requires_authentication'])
        .first(this.#db.raw('1 AS held')),
    );
    return row !== undefined;
  }

  async recordCompletion(link: PaymentLink): Promise<void> {
    await this.#update(link, { completed_payments: link.completedPayments });
  }

  async markDeactivated(link: PaymentLink): Promise<void> {
    await this.#update(link, { deactivated_at: link.deactivatedAt });
  }

  async #update(link: PaymentLink, change: Partial<PaymentLinkRow>): Promise<void> {
    const updated = await translateErrors(() =>
      this.#db('payment_links')
        .where({ id: link.id, version: link.version - 1 })
        .update({ ...change, version: link.version }),
    );
    if (updated !== 1) throw new ConflictError(`The payment link ${link.id} changed while this request ran.`);
  }
}
