import { PostgresSubscriptionRepository, PostgresTestClockRepository } from '../../../modules/subscription/adapters/postgres/postgres-subscriptions.ts';
import { PostgresCaptureRequests } from '../../../modules/capture/adapters/postgres/postgres-capture-requests.ts';
import { PostgresPayoutRepository } from '../../../modules/payout/adapters/postgres/postgres-payouts.ts';
import type { Knex } from 'knex';
import type { AfterCommit, TransactionScope, UnitOfWork } from '../../ports/unit-of-work.port.ts';
import { translateErrors } from './database.ts';
import { PostgresEventOutbox } from '../../../modules/event/adapters/postgres/postgres-event-outbox.ts';
import { PostgresRequestLedger } from './postgres-idempotency-store.ts';
import { PostgresMerchantRepository } from '../../../modules/merchant/adapters/postgres/postgres-merchant-repository.ts';
import { PostgresOrderRepository } from '../../../modules/order/adapters/postgres/postgres-order-repository.ts';
import { PostgresWebhookDeliveryQueue } from '../../../modules/webhook/adapters/postgres/postgres-webhook-delivery-queue.ts';
import { PostgresWebhookEndpointRepository } from '../../../modules/webhook/adapters/postgres/postgres-webhook-endpoint-repository.ts';
import { PostgresPaymentRepository } from '../../../modules/payment/adapters/postgres/postgres-payment-repository.ts';
import { PostgresPaymentRouteRepository } from '../../../modules/payment/adapters/postgres/postgres-payment-route-repository.ts';
import { PostgresLedgerJournal } from '../../../modules/ledger/adapters/postgres/postgres-ledger.ts';
import { PostgresRefundRepository } from '../../../modules/refund/adapters/postgres/postgres-refund-repository.ts';
import { PostgresDisputeRepository } from '../../../modules/dispute/adapters/postgres/postgres-dispute-repository.ts';
import { PostgresEvidenceRepository } from '../../../modules/dispute/adapters/postgres/postgres-evidence-repository.ts';
import { PostgresPaymentLinkRepository } from '../../../modules/payment-link/adapters/postgres/postgres-payment-link-repository.ts';
import { PostgresCustomerRepository } from '../../../modules/customer/adapters/postgres/postgres-customer-repository.ts';
import { PostgresCardVault } from '../../../modules/customer/adapters/postgres/postgres-card-vault.ts';

/**
 * UnitOfWork as one Postgres transaction (READ COMMITTED). The repositories
 * of the scope all run on the transaction's connection; where one needs a
 * transaction of its own (an endpoint insert under its cap), it becomes a
 * savepoint inside this one.
 */
export class PostgresUnitOfWork implements UnitOfWork {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  async run<T>(work: (tx: TransactionScope, afterCommit: AfterCommit) => Promise<T>): Promise<T> {
    const tasks: (() => Promise<void>)[] = [];
    const result = await translateErrors(() =>
      this.#knex.transaction((trx) =>
        work(
          scopeOn(trx),
          (task) => tasks.push(task),
        ),
      ),
    );
    // Committed: what had to wait for it runs now (a rollback threw above and skips it).
    await Promise.all(tasks.map((task) => task()));
    return result;
  }

  runAlone<T>(work: (tx: TransactionScope) => Promise<T>): Promise<T> {
    return translateErrors(() => work(scopeOn(this.#knex)));
  }
}

/** The repositories on one transaction (or, for runAlone, on the pool: each statement on its own). */
function scopeOn(db: Knex | Knex.Transaction): TransactionScope {
  return {
    orders: new PostgresOrderRepository(db),
    payments: new PostgresPaymentRepository(db),
    paymentRoutes: new PostgresPaymentRouteRepository(db),
    refunds: new PostgresRefundRepository(db),
    payouts: new PostgresPayoutRepository(db),
    captures: new PostgresCaptureRequests(db),
    subscriptions: new PostgresSubscriptionRepository(db),
    testClocks: new PostgresTestClockRepository(db),
    disputes: new PostgresDisputeRepository(db),
    evidence: new PostgresEvidenceRepository(db),
    links: new PostgresPaymentLinkRepository(db),
    customers: new PostgresCustomerRepository(db),
    vault: new PostgresCardVault(db),
    merchants: new PostgresMerchantRepository(db),
    endpoints: new PostgresWebhookEndpointRepository(db),
    deliveries: new PostgresWebhookDeliveryQueue(db),
    requests: new PostgresRequestLedger(db),
    ledger: new PostgresLedgerJournal(db),
    outbox: new PostgresEventOutbox(db),
  };
}
