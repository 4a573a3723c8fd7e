import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { RefundService } from '../../../src/gen/checkout/v1/refund_pb.ts';
import { coreCall } from '../shared/core-call.ts';
import type { IdParams } from '../shared/schemas.ts';
import { refundJson } from './refund-json.ts';
import { createRefundSchema, type CreateRefundBody } from './schemas.ts';

/** Registers POST /v1/orders/:id/refunds, a call to checkout.v1.RefundService. */
export function registerRefundRoutes(app: FastifyInstance, refunds: Client<typeof RefundService>): void {
  app.post<{ Params: IdParams; Body: CreateRefundBody }>('/v1/orders/:id/refunds', { schema: createRefundSchema }, async (req, reply) => {
    const body = req.body;
    const res = await refunds.createRefund(
      { orderId: req.params.id, amount: body.amount === undefined || body.amount === null ? undefined : BigInt(body.amount), reason: body.reason, note: body.note ?? '' },
      coreCall(req),
    );
    return reply.code(201).send(refundJson(res.refund!));
  });
}
