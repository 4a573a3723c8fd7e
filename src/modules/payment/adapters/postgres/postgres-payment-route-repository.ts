import type { Knex } from 'knex';
import type { PaymentRoute } from '../../domain/routing.ts';
import type { PaymentRouteRepository } from '../../ports/payment-route-repository.port.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

/** The payment_routes table's row. */
interface PaymentRouteRow {
  merchant_id: string;
  livemode: boolean;
  position: number;
  processor: string;
  processor_account_id: string | null;
}

/** PaymentRouteRepository over the payment_routes table (migration 029). */
export class PostgresPaymentRouteRepository implements PaymentRouteRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  list(merchantId: string, livemode: boolean): Promise<PaymentRoute[]> {
    return translateErrors(async () => {
      const rows: PaymentRouteRow[] = await this.#db('payment_routes').where({ merchant_id: merchantId, livemode }).orderBy('position');
      return rows.map((row) => ({ processor: row.processor, processorAccountId: row.processor_account_id }));
    });
  }

  replace(merchantId: string, livemode: boolean, routes: readonly PaymentRoute[]): Promise<void> {
    return translateErrors(async () => {
      await this.#db('payment_routes').where({ merchant_id: merchantId, livemode }).delete();
      if (routes.length === 0) return;
      await this.#db('payment_routes').insert(
        routes.map((route, position): PaymentRouteRow => ({ merchant_id: merchantId, livemode, position, processor: route.processor, processor_account_id: route.processorAccountId })),
      );
    });
  }
}
