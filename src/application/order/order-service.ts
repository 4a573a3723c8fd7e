import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import type {
  OrderService} from '../../gen/checkout/v1/order_pb.ts';
import {
  CreateOrderResponseSchema,
  GetOrderResponseSchema,
  ListOrdersResponseSchema
} from '../../gen/checkout/v1/order_pb.ts';
import type { Authenticate } from '../merchant/authenticate.ts';
import type { CreateOrderUseCase } from './create-order.ts';
import type { GetOrderUseCase } from './get-order.ts';
import type { ListOrdersUseCase } from './list-orders.ts';
import { createOrderCommandFromProto, orderToProto } from './order-mapper.ts';

/** Header that carries the idempotency key, on Connect, gRPC and REST alike. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Response header set when a create is answered from an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** The use cases the order service is built on. */
export interface OrderServiceDeps {
  readonly authenticate: Authenticate;
  readonly createOrder: CreateOrderUseCase;
  readonly getOrder: GetOrderUseCase;
  readonly listOrders: ListOrdersUseCase;
}

/** Implements checkout.v1.OrderService over the use cases. */
export function createOrderService(deps: OrderServiceDeps): ServiceImpl<typeof OrderService> {
  const secretCaller = (ctx: HandlerContext) => deps.authenticate(ctx, 'secret');

  return {
    createOrder: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const key = ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER) ?? undefined;
      const result = await deps.createOrder(caller, createOrderCommandFromProto(req), key);
      if (result.replayed) ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
      return create(CreateOrderResponseSchema, { order: orderToProto(result.order) });
    },
    getOrder: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const details = await deps.getOrder(caller, req.id);
      return create(GetOrderResponseSchema, { order: orderToProto(details.order, details.attempts, details.refunds) });
    },
    listOrders: async (req, ctx) => {
      const caller = await secretCaller(ctx);
      const page = await deps.listOrders(caller, {
        limit: req.limit === 0 ? undefined : req.limit,
        startingAfter: req.startingAfter,
        reference: req.reference,
      });
      return create(ListOrdersResponseSchema, { orders: page.orders.map((d) => orderToProto(d.order, d.attempts, d.refunds)), hasMore: page.hasMore });
    },
  };
}
