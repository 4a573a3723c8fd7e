import { create } from '@bufbuild/protobuf';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { ServiceImpl } from '@connectrpc/connect';
import {
  GetPayoutResponseSchema,
  ListPayoutItemsResponseSchema,
  ListPayoutsResponseSchema,
  PayoutItemSchema,
  PayoutSchema,
  PayoutTotalsSchema,
  type Payout as PayoutMessage,
  type PayoutItem as PayoutItemMessage,
  type PayoutService,
} from '../../../gen/checkout/v1/payout_pb.ts';
import type { Payout, PayoutItem, PayoutStatus } from '../domain/payout.entity.ts';
import type { PayoutReader } from '../ports/payout-repository.port.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../order/application/list-orders.ts';

/** Items per page: 100 unless asked otherwise, at most 1000 (a reconciliation reads many). */
export const DEFAULT_ITEM_LIMIT = 100;
export const MAX_ITEM_LIMIT = 1000;

const STATUSES: readonly PayoutStatus[] = ['pending', 'in_transit', 'paid', 'failed'];

/** A payout as the contracts carry it. */
export function payoutToProto(payout: Payout): PayoutMessage {
  const t = payout.totals;
  return create(PayoutSchema, {
    id: payout.id,
    amount: payout.amount,
    currency: payout.currency,
    status: payout.status,
    totals: create(PayoutTotalsSchema, { gross: t.gross, fees: t.fees, refunds: t.refunds, disputes: t.disputes, adjustments: t.adjustments, net: payout.amount }),
    itemCount: payout.itemCount,
    orderCount: payout.orderCount,
    destination: payout.destination,
    arrivalDate: payout.arrivalDate,
    cutoff: timestampFromDate(payout.cutoff),
    failureCode: payout.failureCode ?? undefined,
    livemode: payout.livemode,
    created: timestampFromDate(payout.createdAt),
  });
}

/** A payout item as the contracts carry it. */
export function payoutItemToProto(item: PayoutItem): PayoutItemMessage {
  return create(PayoutItemSchema, {
    id: item.id,
    type: item.type,
    orderId: item.orderId ?? undefined,
    refundId: item.refundId ?? undefined,
    disputeId: item.disputeId ?? undefined,
    reference: item.reference ?? undefined,
    currency: item.currency,
    gross: item.gross,
    percentageFee: item.percentageFee,
    fixedFee: item.fixedFee,
    otherFees: item.otherFees,
    net: item.net,
    created: timestampFromDate(item.createdAt),
  });
}

function limitOf(asked: number, byDefault: number, max: number): number {
  if (asked === 0) return byDefault;
  if (!Number.isInteger(asked) || asked < 1 || asked > max) throw new ApplicationError('list.limit_invalid', `limit must be an integer from 1 to ${max}.`, 'limit');
  return asked;
}

/** Implements checkout.v1.PayoutService: the caller's payouts and their items, in the key's mode. */
export function createPayoutService(deps: { readonly authenticate: Authenticate; readonly payouts: PayoutReader }): ServiceImpl<typeof PayoutService> {
  async function find(caller: { merchantId: string; livemode: boolean }, id: string): Promise<Payout> {
    const payout = await deps.payouts.findById(caller, id);
    if (!payout) throw new ApplicationError('payout.not_found', `No such payout: "${id}".`, 'id');
    return payout;
  }

  return {
    getPayout: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const payout = await find(caller, req.id);
      const page = await deps.payouts.listItems(payout.id, { limit: limitOf(req.itemLimit, DEFAULT_ITEM_LIMIT, DEFAULT_ITEM_LIMIT), startingAfter: undefined });
      return create(GetPayoutResponseSchema, { payout: payoutToProto(payout), items: page.items.map(payoutItemToProto), itemsHasMore: page.hasMore });
    },
    listPayouts: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      if (req.status !== undefined && !(STATUSES as readonly string[]).includes(req.status)) {
        throw new ApplicationError('payout.status_invalid', `status must be one of ${STATUSES.join(', ')}.`, 'status');
      }
      const page = await deps.payouts.list(caller, {
        limit: limitOf(req.limit, DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT),
        startingAfter: req.startingAfter,
        status: req.status as PayoutStatus | undefined,
      });
      return create(ListPayoutsResponseSchema, { payouts: page.payouts.map(payoutToProto), hasMore: page.hasMore });
    },
    listPayoutItems: async (req, ctx) => {
      const caller = await deps.authenticate(ctx, 'secret');
      const payout = await find(caller, req.payoutId);
      const page = await deps.payouts.listItems(payout.id, { limit: limitOf(req.limit, DEFAULT_ITEM_LIMIT, MAX_ITEM_LIMIT), startingAfter: req.startingAfter });
      return create(ListPayoutItemsResponseSchema, { items: page.items.map(payoutItemToProto), hasMore: page.hasMore });
    },
  };
}
