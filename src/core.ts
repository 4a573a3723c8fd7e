import type { ConnectRouter } from '@connectrpc/connect';
import type { Knex } from 'knex';
import { OrderService } from './gen/checkout/v1/order_pb.ts';
import { CheckoutService } from './gen/checkout/v1/checkout_pb.ts';
import { TestHelperService } from './gen/checkout/v1/test_helpers_pb.ts';
import { createAuthenticate } from './application/authenticate.ts';
import { createCreateOrder } from './application/create-order.ts';
import { createCreateSandbox, type CreateSandboxUseCase } from './application/create-sandbox.ts';
import { createGetOrder } from './application/get-order.ts';
import { createListOrders } from './application/list-orders.ts';
import { createOrderService } from './application/order-service.ts';
import { createTestHelperService } from './application/test-helper-service.ts';
import { createCheckoutService } from './application/checkout/checkout-service.ts';
import { createPaymentEngine, type PaymentEngine } from './application/checkout/payment-engine.ts';
import { PostgresMerchantRepository } from './adapters/postgres/postgres-merchant-repository.ts';
import { PostgresOrderRepository } from './adapters/postgres/postgres-order-repository.ts';
import { PostgresPaymentAttemptRepository } from './adapters/postgres/postgres-payment-attempt-repository.ts';
import { PostgresUnitOfWork } from './adapters/postgres/postgres-unit-of-work.ts';
import { SimulatedAlphaAcquirer } from './adapters/acquirers/simulated-alpha/simulated-alpha-acquirer.ts';
import { SimulatedBetaAcquirer } from './adapters/acquirers/simulated-beta/simulated-beta-acquirer.ts';
import { systemClock } from './adapters/system/system-clock.ts';
import { cryptoIdGenerator } from './adapters/system/crypto-id-generator.ts';
import type { Clock } from './ports/clock.port.ts';
import type { IdGenerator } from './ports/id-generator.port.ts';

/** What the core needs from its host process. */
export interface CoreOptions {
  readonly knex: Knex;
  readonly apiBaseUrl: string;
  readonly checkoutHost: string;
  readonly onInternalError: (err: unknown) => void;
  readonly clock?: Clock;
  readonly ids?: IdGenerator;
}

/** The core, wired: Connect routes for the gateway, and the operator's use cases. */
export interface Core {
  /** Registers every Connect service on a router (Fastify plugin or in-process transport). */
  readonly routes: (router: ConnectRouter) => void;
  readonly createSandbox: CreateSandboxUseCase;
  readonly merchants: PostgresMerchantRepository;
  /** The payment engine, for housekeeping (expiry) run by the host process. */
  readonly payments: PaymentEngine;
}

/** Composes the core's use cases over the Postgres adapters and the simulated acquirers. */
export function createCore(options: CoreOptions): Core {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? cryptoIdGenerator;
  const merchants = new PostgresMerchantRepository(options.knex);
  const orders = new PostgresOrderRepository(options.knex);
  const attempts = new PostgresPaymentAttemptRepository(options.knex);
  const uow = new PostgresUnitOfWork(options.knex);
  const authenticate = createAuthenticate({ keys: merchants });
  const getOrder = createGetOrder({ orders, attempts });
  const payments = createPaymentEngine({
    uow,
    ids,
    clock,
    merchants,
    testCards: merchants,
    testRoutes: { primary: new SimulatedAlphaAcquirer(merchants), alternative: new SimulatedBetaAcquirer(merchants) },
    liveRoutes: undefined,
  });
  const onInternalError = options.onInternalError;
  const orderService = createOrderService({
    authenticate,
    createOrder: createCreateOrder({ uow, ids, clock }),
    getOrder,
    listOrders: createListOrders({ orders, attempts }),
    onInternalError,
  });
  const checkoutService = createCheckoutService({ engine: payments, clock, onInternalError });
  const testHelperService = createTestHelperService({ authenticate, getOrder, engine: payments, onInternalError });
  return {
    routes: (router) => {
      router.service(OrderService, orderService);
      router.service(CheckoutService, checkoutService);
      router.service(TestHelperService, testHelperService);
    },
    createSandbox: createCreateSandbox({ merchants, ids, clock, apiBaseUrl: options.apiBaseUrl, checkoutHost: options.checkoutHost }),
    merchants,
    payments,
  };
}
