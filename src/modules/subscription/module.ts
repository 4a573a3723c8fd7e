import { PostgresSubscriptionRepository, PostgresTestClockRepository } from './adapters/postgres/postgres-subscriptions.ts';
import { SUBSCRIPTION_ERRORS } from './errors.ts';
import type { SubscriptionScope } from './ports/subscription-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { PostgresSubscriptionReader } from './adapters/postgres/postgres-subscriptions.ts';
import { createBilling, type Billing } from './application/bill-subscriptions.ts';
import { createSubscriptionService, createTestClockService } from './application/subscription-service.ts';
import { createTestClockAdvances, type TestClockAdvances } from './application/advance-test-clocks.ts';
import type { OrderCreationStore } from '../order/ports/order-creation-store.port.ts';
import type { MerchantReader } from '../merchant/ports/merchant-repository.port.ts';
import type { PaymentRepository } from '../payment/ports/payment-repository.port.ts';
import type { PayOrder } from '../payment/application/pay-order.ts';
import type { CardVaultUseCases } from '../customer/application/card-vault-use-cases.ts';
import type { Clock } from '../../kernel/ports/clock.port.ts';
import { SubscriptionService, TestClockService } from '../../gen/checkout/v1/subscription_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { SUBSCRIPTION_ID_PREFIX } from './domain/subscription.entity.ts';

/** The subscription module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const SUBSCRIPTION_MODULE = {
  name: 'subscription',
  postgresObjectTables: [[SUBSCRIPTION_ID_PREFIX, 'subscriptions']],
  postgresScope: (db): SubscriptionScope => ({ subscriptions: new PostgresSubscriptionRepository(db), testClocks: new PostgresTestClockRepository(db) }),
  errors: SUBSCRIPTION_ERRORS,
} satisfies ModuleManifest;

/** The subscription module wired: its services, and the biller worker's charges and test clocks. */
export interface SubscriptionWiring extends ModuleWiring {
  readonly billing: Billing;
  /** Test clocks advancing in the background, stepped by the biller worker (and the tests). */
  readonly testClocks: TestClockAdvances;
}

/** Wires the subscription module: its cycles' orders are created as any order and paid with the saved card, at the subscription's clock. */
export function wireSubscription(
  context: ModuleContext,
  deps: {
    readonly orderCreation: OrderCreationStore;
    readonly merchants: MerchantReader;
    readonly payments: PaymentRepository;
    readonly vault: CardVaultUseCases;
    readonly payOrderAt: (at: Clock) => PayOrder;
  },
): SubscriptionWiring {
  const { uow, ids, clock } = context;
  const subscriptions = new PostgresSubscriptionReader(context.knex);
  const billing = createBilling({
    uow,
    subscriptions,
    orderStore: deps.orderCreation,
    merchants: deps.merchants,
    payments: deps.payments,
    vault: deps.vault,
    payOrderAt: deps.payOrderAt,
    ids,
    clock,
    onBackgroundError: context.onInternalError,
  });
  const serviceDeps = { authenticate: context.authenticate, idempotent: context.idempotent, uow, subscriptions, billing, ids, clock };
  return {
    services: [
      connectService(SubscriptionService, createSubscriptionService(serviceDeps), 'secret'),
      connectService(TestClockService, createTestClockService(serviceDeps), 'secret'),
    ],
    billing,
    testClocks: createTestClockAdvances({ uow, subscriptions, billing, ids, clock, onBackgroundError: context.onInternalError }),
  };
}
