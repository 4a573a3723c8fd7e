import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { CaptureMethod, CreateOrderRequestSchema, type CreateOrderRequest, type OrderService } from '../../../src/gen/checkout/v1/order_pb.ts';
import { coreCall } from '../shared/core-call.ts';
import { page } from '../shared/list-query.ts';
import type { IdParams } from '../shared/schemas.ts';
import { orderJson } from './order-json.ts';
import { captureOrderSchema, createOrderSchema, expireOrderSchema, listOrdersSchema, retrieveOrderSchema, voidOrderSchema, type CaptureOrderBody, type CreateOrderBody, type OrderListQuery } from './schemas.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';

/** The proto request of a body Fastify has validated against {@link CreateOrderBody}. */
function createOrderRequest(body: CreateOrderBody): CreateOrderRequest {
  return create(CreateOrderRequestSchema, {
    amount: BigInt(body.amount),
    currency: body.currency,
    reference: body.reference,
    lineItems: (body.line_items ?? []).map((item) => ({ name: item.name, amount: BigInt(item.amount) })),
    returnUrl: body.return_url ?? undefined,
    expiresAt: body.expires_at ? timestampFromDate(new Date(body.expires_at)) : undefined,
    captureMethod: body.capture_method === 'manual' ? CaptureMethod.MANUAL : body.capture_method === 'automatic' ? CaptureMethod.AUTOMATIC : CaptureMethod.UNSPECIFIED,
    customer: body.customer ?? undefined,
    card: body.card ?? undefined,
    confirm: body.confirm ?? false,
  });
}

/** Registers /v1/orders: create, retrieve, list, void, capture and expire, each a call to checkout.v1.OrderService. */
export function registerOrderRoutes(app: FastifyInstance, orders: Client<typeof OrderService>): void {
  app.post<{ Body: CreateOrderBody }>('/v1/orders', { schema: createOrderSchema }, async (req, reply) => {
    const res = await orders.createOrder(createOrderRequest(req.body), coreCall(req));
    const order = orderJson(res.order!);
    return reply.code(201).send(res.clientSecret ? { ...order, client_secret: res.clientSecret } : order);
  });

  app.get<{ Params: IdParams }>('/v1/orders/:id', { schema: retrieveOrderSchema }, async (req) => {
    const res = await orders.getOrder({ id: req.params.id }, coreCall(req));
    return orderJson(res.order!);
  });

  app.post<{ Params: IdParams }>('/v1/orders/:id/void', { schema: voidOrderSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await orders.voidOrder({ id: req.params.id }, coreCall(req));
    return orderJson(res.order!);
  });

  app.post<{ Params: IdParams; Body: CaptureOrderBody }>('/v1/orders/:id/capture', { schema: captureOrderSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const amount = req.body.amount;
    const res = await orders.captureOrder({ id: req.params.id, amount: amount === undefined || amount === null ? undefined : BigInt(amount) }, coreCall(req));
    return orderJson(res.order!);
  });

  app.post<{ Params: IdParams }>('/v1/orders/:id/expire', { schema: expireOrderSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await orders.expireOrder({ id: req.params.id }, coreCall(req));
    return orderJson(res.order!);
  });

  app.get<{ Querystring: OrderListQuery }>('/v1/orders', { schema: listOrdersSchema }, async (req) => {
    const res = await orders.listOrders({ ...page(req.query), reference: req.query.reference, paymentLink: req.query.payment_link }, coreCall(req));
    return { object: 'list', url: '/v1/orders', has_more: res.hasMore, data: res.orders.map(orderJson) };
  });
}
