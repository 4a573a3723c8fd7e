import { Code, ConnectError, type Client } from '@connectrpc/connect';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OrderService } from '../../src/gen/checkout/v1/order_pb.ts';
import { createOrderRequestFromJson, orderJson } from './order-json.ts';
import { invalidParam } from './rest-error.ts';

/** Headers the REST API forwards to the core unchanged. */
const FORWARDED_HEADERS = ['authorization', 'idempotency-key'] as const;

/** The core-facing headers of a REST request. */
export function forwardHeaders(req: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = { 'request-id': req.id };
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return headers;
}

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
      await orders.getOrder({ id: '' }, { headers: forwardHeaders(req) }).catch((authErr: unknown) => {
        const code = ConnectError.from(authErr).code;
        if (code === Code.Unauthenticated || code === Code.PermissionDenied) throw authErr;
      });
      throw err;
    }
    let replayed = false;
    const res = await orders.createOrder(request, {
      headers: forwardHeaders(req),
      onHeader: (headers) => {
        replayed = headers.get('idempotent-replayed') === 'true';
      },
    });
    if (replayed) reply.header('Idempotent-Replayed', 'true');
    return reply.code(201).send(orderJson(res.order!));
  });

  app.get<{ Params: { id: string } }>('/v1/orders/:id', async (req) => {
    const res = await orders.getOrder({ id: req.params.id }, { headers: forwardHeaders(req) });
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
      { headers: forwardHeaders(req) },
    );
    return { object: 'list', url: '/v1/orders', has_more: res.hasMore, data: res.orders.map(orderJson) };
  });
}
