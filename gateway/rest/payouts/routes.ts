import { Readable } from 'node:stream';
import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { PayoutService } from '../../../src/gen/checkout/v1/payout_pb.ts';
import { coreCall } from '../shared/core-call.ts';
import { page } from '../shared/list-query.ts';
import type { IdParams } from '../shared/schemas.ts';
import { CSV_COLUMNS, csvLine, payoutItemJson, payoutJson } from './payout-json.ts';
import { exportPayoutItemsSchema, listPayoutItemsSchema, listPayoutsSchema, retrievePayoutSchema, type PayoutItemQuery, type PayoutListQuery } from './schemas.ts';

/** Items per call while the CSV export pages through a payout. */
const EXPORT_PAGE = 1000;

/** Registers /v1/payouts: payouts, their items, and the CSV export, calls to checkout.v1.PayoutService. */
export function registerPayoutRoutes(app: FastifyInstance, payouts: Client<typeof PayoutService>): void {
  app.get<{ Querystring: PayoutListQuery }>('/v1/payouts', { schema: listPayoutsSchema }, async (req) => {
    const res = await payouts.listPayouts({ ...page(req.query), status: req.query.status }, coreCall(req));
    return { object: 'list', url: '/v1/payouts', has_more: res.hasMore, data: res.payouts.map(payoutJson) };
  });

  app.get<{ Params: IdParams }>('/v1/payouts/:id', { schema: retrievePayoutSchema }, async (req) => {
    const res = await payouts.getPayout({ id: req.params.id }, coreCall(req));
    const payout = res.payout!;
    return { ...payoutJson(payout), items: { object: 'list', url: `/v1/payouts/${payout.id}/items`, has_more: res.itemsHasMore, data: res.items.map(payoutItemJson) } };
  });

  app.get<{ Params: IdParams; Querystring: PayoutItemQuery }>('/v1/payouts/:id/items', { schema: listPayoutItemsSchema }, async (req) => {
    const res = await payouts.listPayoutItems({ payoutId: req.params.id, ...page(req.query) }, coreCall(req));
    return { object: 'list', url: `/v1/payouts/${req.params.id}/items`, has_more: res.hasMore, data: res.items.map(payoutItemJson) };
  });

  app.get<{ Params: IdParams }>('/v1/payouts/:id/items.csv', { schema: exportPayoutItemsSchema }, async (req, reply) => {
    // Asked first, so that an unknown payout is a JSON 404 before any CSV is sent.
    const first = await payouts.listPayoutItems({ payoutId: req.params.id, limit: EXPORT_PAGE }, coreCall(req));
    const payoutId = req.params.id;
    async function* lines() {
      yield `${CSV_COLUMNS.join(',')}\r\n`;
      let current = first;
      for (;;) {
        yield current.items.map((item) => csvLine(payoutId, item)).join('');
        const last = current.items.at(-1);
        if (!current.hasMore || !last) return;
        current = await payouts.listPayoutItems({ payoutId, limit: EXPORT_PAGE, startingAfter: last.id }, coreCall(req));
      }
    }
    return reply
      .header('content-type', 'text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="${payoutId}-items.csv"`)
      .send(Readable.from(lines()));
  });
}
