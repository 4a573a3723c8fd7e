import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { OrderService } from '../../src/gen/checkout/v1/order_pb.ts';
import { createOrderRequestFromJson, orderJson } from './order-json.ts';
import { invalidParam } from './rest-error.ts';
import { coreCall } from './core-call.ts';

const LIST_PARAMS = new Set(['limit', 'starting_after', 'reference']);

/** Registers /v1/orders: create, retrieve and list, each a call to checkout.v1.OrderService. */
export function registerOrderRoutes(app: FastifyInstance, orders: Client<typeof OrderService>): void {
  app.post('/v1/orders', async (req, reply) => {
    let request;
    try {
      request = createOrderRequestFromJson(req.body);
    } catch (err) {
      // Credentials are judged before the body, as for every other error: a caller without a
      // valid key learns nothing about our parameters. Only this error path pays the extra call.
      await orders.getOrder({ id: '' }, coreCall(req)).catch((authErr: unknown) => {
        const code = ConnectError.from(authErr).code;
        if (code === Code.Unauthenticated || code === Code.PermissionDenied) throw authErr;
      });
      throw err;
    }
    const res = await orders.createOrder(request, coreCall(req));
    return reply.code(201).send(orderJson(res.order!));
  });

  app.get<{ Params: { id: string } }>('/v1/orders/:id', async (req) => {
    const res = await orders.getOrder({ id: req.params.id }, coreCall(req));
    return orderJson(res.order!);
  });

  app.get('/v1/orders', async (req) => {
    const query = req.query as Record<string, unknown>;
    for (const [key, value] of Object.entries(query)) {
      if (!LIST_PARAMS.has(key)) throw invalidParam('parameter_unknown', key, `Received unknown query parameter: ${key}. Known: limit, starting_after, reference.`);
      if (typeof value !== 'string') throw invalidParam('parameter_invalid_string', key, `${key} must be given once.`);
    }
    const limitText = query.limit as string | undefined;
    if (limitText !== undefined && !/^\d{1,6}$/.test(limitText)) throw invalidParam('limit_invalid', 'limit', 'limit must be an integer from 1 to 100.');
    const res = await orders.listOrders(
      {
        limit: limitText === undefined ? 0 : Number(limitText) || -1,
        startingAfter: query.starting_after as string | undefined,
        reference: query.reference as string | undefined,
      },
      coreCall(req),
    );
    return { object: 'list', url: '/v1/orders', has_more: res.hasMore, data: res.orders.map(orderJson) };
  });
}
