import type { Knex } from 'knex';
import type { CaptureRequest, CaptureRequests } from '../../ports/capture-request.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

interface Row {
  order_id: string;
  payment_id: string;
  amount: string;
  requested_at: Date;
}

/** CaptureRequests on the capture_requests table. */
export class PostgresCaptureRequests implements CaptureRequests {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  add(request: CaptureRequest): Promise<void> {
    return translateErrors(async () => {
      await this.#db('capture_requests').insert({ order_id: request.orderId, payment_id: request.paymentId, amount: request.amount.toString(), requested_at: request.requestedAt });
    });
  }

  find(orderId: string): Promise<CaptureRequest | undefined> {
    return translateErrors(async () => {
      const row = await this.#db<Row>('capture_requests').where({ order_id: orderId }).first();
      return row ? { orderId: row.order_id, paymentId: row.payment_id, amount: BigInt(row.amount), requestedAt: new Date(row.requested_at) } : undefined;
    });
  }

  remove(orderId: string): Promise<void> {
    return translateErrors(async () => {
      await this.#db('capture_requests').where({ order_id: orderId }).delete();
    });
  }

  stale(before: Date, limit: number): Promise<string[]> {
    return translateErrors(() => this.#db('capture_requests').where('requested_at', '<', before).orderBy('requested_at').limit(limit).pluck('order_id'));
  }
}
