import Type, { type Static } from 'typebox';
import { payoutJson } from '../payouts/payout-json.ts';
import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { TestHelperService } from '../../../src/gen/checkout/v1/test_helpers_pb.ts';
import { orderJson } from '../orders/order-json.ts';
import { coreCall } from '../shared/core-call.ts';
import { Body, BODY_ERRORS, ERROR_NOTE, COMMON_ERRORS, ErrorAnswer, IdempotencyHeaders, IdParams, NoBody, NoQuery, NOT_FOUND, STATE_CHANGE_ERRORS } from '../shared/schemas.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import { disputeJson } from '../disputes/dispute-json.ts';
import { createDisputeSchema, type CreateDisputeBody } from '../disputes/schemas.ts';

const simulateTransferSchema = {
  operationId: 'simulateTransfer',
  summary: "Test mode only: mark the order's virtual-IBAN transfer as arrived, which pays it (method bank_transfer)",
  tags: ['test_helpers'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: NoBody,
  response: {
    200: { ...Type.Ref('Order'), description: 'The paid order.' },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...STATE_CHANGE_ERRORS,
    ...BODY_ERRORS,
    422: ErrorAnswer('The order is already paid (order_already_paid) or expired (order_expired).'),
  },
};

const RunPayoutsBody = Body(
  {
    outcome: Type.Optional(
      Type.String({
        enum: ['paid', 'failed'],
        description: 'How the simulated bank answers: paid (default), or failed (the money returns to the available balance).',
        [ERROR_NOTE]: { code: 'parameter_invalid', message: 'outcome must be "paid" or "failed".' },
      }),
    ),
  },
  'The request body must be a JSON object, e.g. {} or {"outcome": "failed"}.',
  { optional: true },
);
type RunPayoutsBody = Static<typeof RunPayoutsBody>;

const runPayoutsSchema = {
  operationId: 'runPayouts',
  summary: 'Test mode only: settle everything captured until now as if the delay had passed, and pay it out at once',
  tags: ['test_helpers'],
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: RunPayoutsBody,
  response: {
    200: Type.Object(
      {
        object: Type.Literal('payout_run'),
        settled_orders: Type.Integer({ description: 'Orders whose money moved to the available balance in this run.' }),
        payouts: Type.Array(Type.Ref('Payout'), { description: "The payouts this run made, after the simulated bank's answer (paid or failed)." }),
      },
      { description: 'The run.' },
    ),
    ...COMMON_ERRORS,
    ...STATE_CHANGE_ERRORS,
    ...BODY_ERRORS,
  },
};

/** Registers /v1/test_helpers: test-mode simulations (refused with live keys). */
export function registerTestHelperRoutes(app: FastifyInstance, helpers: Client<typeof TestHelperService>): void {
  app.post<{ Params: IdParams }>('/v1/test_helpers/orders/:id/simulate_transfer', { schema: simulateTransferSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await helpers.simulateBankTransfer({ orderId: req.params.id }, coreCall(req));
    return orderJson(res.order!);
  });

  app.post<{ Params: IdParams; Body: CreateDisputeBody }>('/v1/test_helpers/orders/:id/dispute', { schema: createDisputeSchema }, async (req, reply) => {
    const body = req.body;
    const res = await helpers.createDispute(
      {
        orderId: req.params.id,
        reason: body.reason,
        amount: body.amount === undefined || body.amount === null ? undefined : BigInt(body.amount),
        evidenceDueBy: body.evidence_due_by ? timestampFromDate(new Date(body.evidence_due_by)) : undefined,
      },
      coreCall(req),
    );
    return reply.code(201).send(disputeJson(res.dispute!));
  });

  app.post<{ Body: RunPayoutsBody }>('/v1/test_helpers/payouts/run', { schema: runPayoutsSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await helpers.runPayouts({ outcome: req.body.outcome }, coreCall(req));
    return { object: 'payout_run', settled_orders: res.settledOrders, payouts: res.payouts.map(payoutJson) };
  });
}
