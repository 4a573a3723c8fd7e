import { PostgresOrderRepository } from './adapters/postgres/postgres-order-repository.ts';
import { ORDER_ERRORS } from './errors.ts';
import type { OrderScope } from './ports/order-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { PostgresOrderCreationStore } from './adapters/postgres/postgres-order-creation-store.ts';
import { createCreateOrder } from './application/create-order.ts';
import { createGetOrder } from './application/get-order.ts';
import { createListOrders } from './application/list-orders.ts';
import { createOrderService, type OrderServiceDeps } from './application/order-service.ts';
import type { OrderRepository } from './ports/order-repository.port.ts';
import type { OrderCreationStore } from './ports/order-creation-store.port.ts';
import type { PaymentRepository } from '../payment/ports/payment-repository.port.ts';
import type { RefundRepository } from '../refund/ports/refund-repository.port.ts';
import type { DisputeRepository } from '../dispute/ports/dispute-repository.port.ts';
import { OrderService } from '../../gen/checkout/v1/order_pb.ts';
import type { Knex } from 'knex';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { ORDER_ID_PREFIX } from './domain/order.entity.ts';

/** The order module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const ORDER_MODULE = {
  name: 'order',
  postgresObjectTables: [[ORDER_ID_PREFIX, 'orders']],
  postgresScope: (db): OrderScope => ({ orders: new PostgresOrderRepository(db) }),
  errors: ORDER_ERRORS,
} satisfies ModuleManifest;

/** The order module's stores outside a transaction: reads of orders, and their creation (with its idempotency key). */
export interface OrderStores {
  readonly orders: OrderRepository;
  readonly creation: OrderCreationStore;
}

/** The order module's stores on the pool, for the modules that read or create orders (payments, subscriptions, links). */
export function orderStores(knex: Knex): OrderStores {
  return { orders: new PostgresOrderRepository(knex), creation: new PostgresOrderCreationStore(knex) };
}

/** Wires OrderService: an order's reads show its payments, refunds and disputes; its actions are the other modules' use cases. */
export function wireOrder(
  context: ModuleContext,
  deps: {
    readonly stores: OrderStores;
    readonly reads: { readonly payments: PaymentRepository; readonly refunds: RefundRepository; readonly disputes: DisputeRepository };
  } & Pick<OrderServiceDeps, 'voidOrder' | 'captureOrder' | 'expireOrder' | 'prepareCharge'>,
): ModuleWiring {
  const { ids, clock } = context;
  const reads = { orders: deps.stores.orders, ...deps.reads };
  const service = createOrderService({
    authenticate: context.authenticate,
    createOrder: createCreateOrder({ store: deps.stores.creation, ids, clock }),
    getOrder: createGetOrder(reads),
    listOrders: createListOrders(reads),
    voidOrder: deps.voidOrder,
    captureOrder: deps.captureOrder,
    expireOrder: deps.expireOrder,
    idempotent: context.idempotent,
    prepareCharge: deps.prepareCharge,
  });
  return { services: [connectService(OrderService, service, 'secret')] };
}
