import { PostgresPaymentRepository } from './adapters/postgres/postgres-payment-repository.ts';
import { PostgresPaymentRouteRepository } from './adapters/postgres/postgres-payment-route-repository.ts';
import { PAYMENT_ERRORS } from './errors.ts';
import type { PaymentScope } from './ports/payment-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { simulatedAlpha, simulatedBeta } from './adapters/simulator/simulated-routes.ts';
import { createSimulatedIssuerPages, type SimulatedIssuerPages } from './adapters/simulator/simulated-issuer-pages.ts';
import { createPayments, type Payments } from './application/payments.ts';
import type { PayOrder } from './application/pay-order.ts';
import { DEFAULT_VELOCITY_LIMITS, type VelocityLimits } from './domain/velocity.ts';
import type { PaymentRepository } from './ports/payment-repository.port.ts';
import type { TestCardDirectory } from './ports/test-card-directory.port.ts';
import type { MerchantRepository } from '../merchant/ports/merchant-repository.port.ts';
import type { OrderRepository } from '../order/ports/order-repository.port.ts';
import type { CardVaultUseCases } from '../customer/application/card-vault-use-cases.ts';
import type { Clock } from '../../kernel/ports/clock.port.ts';
import type { ModuleContext } from '../../kernel/module-manifest.ts';
import { PAYMENT_ID_PREFIX } from './domain/payment.entity.ts';
import { ATTEMPT_ID_PREFIX } from './domain/payment-attempt.entity.ts';

/** The payment module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const PAYMENT_MODULE = {
  name: 'payment',
  postgresObjectTables: [[PAYMENT_ID_PREFIX, 'payments'], [ATTEMPT_ID_PREFIX, 'payment_attempts']],
  postgresScope: (db): PaymentScope => ({ payments: new PostgresPaymentRepository(db), paymentRoutes: new PostgresPaymentRouteRepository(db) }),
  errors: PAYMENT_ERRORS,
} satisfies ModuleManifest;

/** The payment engine wired, with its reads and the engine at another clock's time. */
export interface PaymentWiring {
  readonly payments: Payments;
  /** Payment attempts, read outside a transaction. */
  readonly reads: PaymentRepository;
  /** The payment engine at another clock's time: a test clock's, for the subscriptions on it. */
  readonly payOrderAt: (at: Clock) => PayOrder;
  /** The simulated routes' issuer page (test mode's 3-D Secure), served by the gateway. */
  readonly simulatedIssuer: SimulatedIssuerPages;
}

/** Wires the payment engine over Postgres and the simulated acquirers (test mode's default routes; live mode has no processor yet). */
export function wirePayment(
  context: ModuleContext,
  deps: {
    readonly merchants: MerchantRepository & TestCardDirectory;
    readonly orders: OrderRepository;
    readonly vault: CardVaultUseCases;
    /** Card-testing limits of the checkout (DEFAULT_VELOCITY_LIMITS when absent). */
    readonly velocity?: VelocityLimits;
  },
): PaymentWiring {
  const { clock } = context;
  const reads = new PostgresPaymentRepository(context.knex);
  const simulated = [simulatedAlpha(deps.merchants), simulatedBeta(deps.merchants)];
  const paymentDeps = {
    uow: context.uow,
    reads: { orders: deps.orders, payments: reads },
    ids: context.ids,
    clock,
    merchants: deps.merchants,
    testCards: deps.merchants,
    // Test mode's default routes, in order: simulated_alpha, then simulated_beta on a soft decline. No live processor yet.
    processors: { test: simulated, live: [] },
    velocity: deps.velocity ?? DEFAULT_VELOCITY_LIMITS,
    onBackgroundError: context.onInternalError,
    metrics: context.metrics,
    cardSaving: deps.vault.saving,
  };
  const payments = createPayments(paymentDeps);
  return {
    payments,
    reads,
    simulatedIssuer: createSimulatedIssuerPages(simulated),
    payOrderAt: (at) => (at === clock ? payments.payOrder : createPayments({ ...paymentDeps, clock: at }).payOrder),
  };
}
