import type { Knex } from 'knex';
import type { TransactionScope, UnitOfWork } from '../../ports/unit-of-work.port.ts';
import { translateErrors } from './database.ts';
import { PostgresEventOutbox } from './postgres-event-outbox.ts';
import { PostgresOrderRepository } from './postgres-order-repository.ts';
import { PostgresPaymentRepository } from './payments/postgres-payment-repository.ts';
import { PostgresMerchantRepository } from './postgres-merchant-repository.ts';

/** UnitOfWork as one Postgres transaction (READ COMMITTED). */
export class PostgresUnitOfWork implements UnitOfWork {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  run<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
    return translateErrors(() =>
      this.#knex.transaction((trx) =>
        work({
          orders: new PostgresOrderRepository(trx),
          payments: new PostgresPaymentRepository(trx),
          merchants: new PostgresMerchantRepository(trx),
          outbox: new PostgresEventOutbox(trx),
        }),
      ),
    );
  }
}
