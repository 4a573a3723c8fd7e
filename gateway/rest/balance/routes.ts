import Type from 'typebox';
import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { BalanceService } from '../../../src/gen/checkout/v1/balance_pb.ts';
import { coreCall } from '../shared/core-call.ts';
import { COMMON_ERRORS, NoQuery } from '../shared/schemas.ts';

const Amounts = Type.Array(Type.Object({ currency: Type.String(), amount: Type.Integer({ description: 'Minor units; negative when refunds outran the balance.' }) }));

const getBalanceSchema = {
  operationId: 'retrieveBalance',
  summary: "The merchant's pending and available balances, per currency, for the key's mode",
  tags: ['balance'],
  querystring: NoQuery,
  response: {
    200: Type.Object(
      {
        object: Type.Literal('balance'),
        pending: Amounts,
        available: Amounts,
        livemode: Type.Boolean(),
      },
      { description: 'pending: captured, not yet settled. available: settled, waiting for a payout. See docs/money.md.' },
    ),
    ...COMMON_ERRORS,
  },
};

/** Registers GET /v1/balance, a call to checkout.v1.BalanceService. */
export function registerBalanceRoutes(app: FastifyInstance, balance: Client<typeof BalanceService>): void {
  app.get('/v1/balance', { schema: getBalanceSchema }, async (req) => {
    const res = await balance.getBalance({}, coreCall(req));
    const amounts = (list: { currency: string; amount: bigint }[]) => list.map((m) => ({ currency: m.currency, amount: Number(m.amount) }));
    return { object: 'balance', pending: amounts(res.pending), available: amounts(res.available), livemode: res.livemode };
  });
}
