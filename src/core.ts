import type { ConnectRouter } from '@connectrpc/connect';
import type { Knex } from 'knex';
import { OrderService } from './gen/checkout/v1/order_pb.ts';
import { createAuthenticate } from './application/authenticate.ts';
import { createCreateOrder } from './application/create-order.ts';
import { createCreateSandbox, type CreateSandboxUseCase } from './application/create-sandbox.ts';
import { createGetOrder } from './application/get-order.ts';
import { createListOrders } from './application/list-orders.ts';
import { createOrderService } from './application/order-service.ts';
import { PostgresMerchantRepository } from './adapters/postgres/postgres-merchant-repository.ts';
import { PostgresOrderRepository } from './adapters/postgres/postgres-order-repository.ts';
import { PostgresUnitOfWork } from './adapters/postgres/postgres-unit-of-work.ts';
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
}

/** Composes the core's use cases over the Postgres adapters. */
export function createCore(options: CoreOptions): Core {
  const clock = options.clock ?? systemClock;
  const ids = options.ids ?? cryptoIdGenerator;
  const merchants = new PostgresMerchantRepository(options.knex);
  const orders = new PostgresOrderRepository(options.knex);
  const orderService = createOrderService({
    authenticate: createAuthenticate({ keys: merchants }),
    createOrder: createCreateOrder({ uow: new PostgresUnitOfWork(options.knex), ids, clock }),
    getOrder: createGetOrder({ orders }),
    listOrders: createListOrders({ orders }),
    onInternalError: options.onInternalError,
  });
  return {
    routes: (router) => {
      router.service(OrderService, orderService);
    },
    createSandbox: createCreateSandbox({ merchants, ids, clock, apiBaseUrl: options.apiBaseUrl, checkoutHost: options.checkoutHost }),
    merchants,
  };
}
