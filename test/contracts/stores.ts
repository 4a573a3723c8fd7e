// The two adapters of each storage port, as the storage contract suites run them: the in-memory fakes
// (test/support/fakes) and the Postgres adapters on a migrated database of the suite's own. Both are
// reached through the same ports and seeded by the same builders (test/support/builders.ts).
import { PostgresCaptureRequests } from '../../src/modules/capture/adapters/postgres/postgres-capture-requests.ts';
import { PostgresDisputeRepository } from '../../src/modules/dispute/adapters/postgres/postgres-dispute-repository.ts';
import { PostgresEventOutbox, PostgresOutboxReader } from '../../src/modules/event/adapters/postgres/postgres-event-outbox.ts';
import { PostgresRequestLedger } from '../../src/kernel/adapters/postgres/postgres-request-ledger.ts';
import { PostgresIdempotencyStore } from '../../src/modules/order/adapters/postgres/postgres-idempotency-store.ts';
import { PostgresLedgerJournal } from '../../src/modules/ledger/adapters/postgres/postgres-ledger.ts';
import { PostgresMerchantRepository } from '../../src/modules/merchant/adapters/postgres/postgres-merchant-repository.ts';
import { PostgresOrderCreationStore } from '../../src/modules/order/adapters/postgres/postgres-order-creation-store.ts';
import { PostgresOrderRepository } from '../../src/modules/order/adapters/postgres/postgres-order-repository.ts';
import { PostgresPaymentRepository } from '../../src/modules/payment/adapters/postgres/postgres-payment-repository.ts';
import { PostgresPaymentRouteRepository } from '../../src/modules/payment/adapters/postgres/postgres-payment-route-repository.ts';
import { postgresScope } from '../../src/composition/modules.ts';
import { PostgresUnitOfWork } from '../../src/kernel/adapters/postgres/postgres-unit-of-work.ts';
import { PostgresRefundRepository } from '../../src/modules/refund/adapters/postgres/postgres-refund-repository.ts';
import type { OutboxReader } from '../../src/modules/event/ports/event-outbox.port.ts';
import type { IdempotencyStore } from '../../src/modules/order/ports/order-idempotency.port.ts';
import type { ApiKeyResolver } from '../../src/modules/merchant/ports/api-key-resolver.port.ts';
import type { MerchantRepository } from '../../src/modules/merchant/ports/merchant-repository.port.ts';
import type { TestCardDirectory } from '../../src/modules/payment/ports/test-card-directory.port.ts';
import type { TransactionScope } from '../../src/kernel/ports/unit-of-work.port.ts';
import type { SeedPorts } from '../support/builders.ts';
import { createTestDatabase } from '../support/database.ts';
import { FixedClock, memoryWorld, SequentialIds } from '../support/fakes/index.ts';

/** Every adapter family of the storage ports. */
export const STORES = ['memory', 'postgres'] as const;
export type StoreKind = (typeof STORES)[number];

/** The repositories a contract reads and writes outside a unit of work. */
export type Reads = Pick<TransactionScope, 'orders' | 'payments' | 'paymentRoutes' | 'refunds' | 'captures' | 'disputes' | 'requests' | 'ledger' | 'outbox'>;

/** One adapter family under test, behind the ports. */
export interface StoreUnderTest extends SeedPorts {
  readonly kind: StoreKind;
  readonly clock: FixedClock;
  readonly merchants: MerchantRepository & ApiKeyResolver & TestCardDirectory;
  readonly idempotency: IdempotencyStore;
  readonly reads: Reads;
  readonly outboxReader: OutboxReader;
  close(): Promise<void>;
}

/** Opens a store: a fresh in-memory world, or a new migrated Postgres database. */
export async function openStore(kind: StoreKind): Promise<StoreUnderTest> {
  const clock = new FixedClock();
  if (kind === 'memory') {
    const world = memoryWorld();
    return { kind, ...world, clock, close: async () => undefined };
  }
  const db = await createTestDatabase();
  const knex = db.knex;
  return {
    kind,
    clock,
    ids: new SequentialIds(),
    uow: new PostgresUnitOfWork(knex, postgresScope),
    merchants: new PostgresMerchantRepository(knex),
    orderCreation: new PostgresOrderCreationStore(knex),
    idempotency: new PostgresIdempotencyStore(knex),
    reads: {
      orders: new PostgresOrderRepository(knex),
      payments: new PostgresPaymentRepository(knex),
      paymentRoutes: new PostgresPaymentRouteRepository(knex),
      refunds: new PostgresRefundRepository(knex),
      captures: new PostgresCaptureRequests(knex),
      disputes: new PostgresDisputeRepository(knex),
      requests: new PostgresRequestLedger(knex),
      ledger: new PostgresLedgerJournal(knex),
      outbox: new PostgresEventOutbox(knex),
    },
    outboxReader: new PostgresOutboxReader(knex),
    close: () => db.drop(),
  };
}
