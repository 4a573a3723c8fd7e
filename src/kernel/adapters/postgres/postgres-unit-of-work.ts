import type { Knex } from 'knex';
import type { AfterCommit, TransactionScope, UnitOfWork } from '../../ports/unit-of-work.port.ts';
import type { PostgresScopeFactory } from '../../module-manifest.ts';
import { translateErrors } from './database.ts';

/**
 * UnitOfWork as one Postgres transaction (READ COMMITTED). The repositories
 * of the scope all run on the transaction's connection; where one needs a
 * transaction of its own (an endpoint insert under its cap), it becomes a
 * savepoint inside this one.
 */
export class PostgresUnitOfWork implements UnitOfWork {
  readonly #knex: Knex;
  readonly #scopeOn: PostgresScopeFactory<TransactionScope>;

  /** `scopeOn` builds every module's repositories on a connection (postgresScope of src/composition/modules.ts). */
  constructor(knex: Knex, scopeOn: PostgresScopeFactory<TransactionScope>) {
    this.#knex = knex;
    this.#scopeOn = scopeOn;
  }

  async run<T>(work: (tx: TransactionScope, afterCommit: AfterCommit) => Promise<T>): Promise<T> {
    const tasks: (() => Promise<void>)[] = [];
    const result = await translateErrors(() =>
      this.#knex.transaction((trx) =>
        work(
          this.#scopeOn(trx),
          (task) => tasks.push(task),
        ),
      ),
    );
    // Committed: what had to wait for it runs now (a rollback threw above and skips it).
    await Promise.all(tasks.map((task) => task()));
    return result;
  }

  runAlone<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
    return translateErrors(() => work(this.#scopeOn(this.#knex)));
  }
}
