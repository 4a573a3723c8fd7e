import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { TestHelperService } from '../../src/gen/checkout/v1/test_helpers_pb.ts';
import { orderJson } from './order-json.ts';
import { coreCall } from './core-call.ts';

/** Registers /v1/test_helpers: test-mode simulations (refused with live keys). */
export function registerTestHelperRoutes(app: FastifyInstance, helpers: Client<typeof TestHelperService>): void {
  app.post<{ Params: { id: string } }>('/v1/test_helpers/orders/:id/simulate_transfer', async (req) => {
    const res = await helpers.simulateBankTransfer({ orderId: req.params.id }, coreCall(req));
    return orderJson(res.order!);
  });
}
