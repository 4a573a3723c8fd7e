import Type, { type Static } from 'typebox';
import { COMMON_ERRORS, ErrorAnswer, IdParams, IsoTime, ListOf, NoQuery, NOT_FOUND, OrNull, ERROR_NOTE } from '../shared/schemas.ts';
import { Filter, ListQuery } from '../shared/list-query.ts';

// Every shape of /v1/payouts, declared once.

export const PayoutListQuery = ListQuery({ status: Filter('Only payouts in this status: pending, in_transit, paid or failed.') });
export type PayoutListQuery = Static<typeof PayoutListQuery>;

/** The query of an item page: up to 1,000 items, since a reconciliation reads many. */
export const PayoutItemQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.String({
        pattern: '^[0-9]{1,6}$',
        description: 'How many items to return, 1 to 1000; 100 when omitted.',
        [ERROR_NOTE]: { code: 'limit_invalid', message: 'limit must be an integer from 1 to 1000.' },
      }),
    ),
    starting_after: Filter('The id of the last item of the previous page; this page starts after it.'),
  },
  { additionalProperties: false },
);
export type PayoutItemQuery = Static<typeof PayoutItemQuery>;

const Minor = (description: string) => Type.Integer({ description: `${description} Minor units of currency.` });

export const PayoutItemSchema = Type.Object(
  {
    id: Type.String({ description: "The item's position in its payout; a cursor for starting_after." }),
    object: Type.Literal('payout_item'),
    type: Type.String({ enum: ['charge', 'refund', 'dispute', 'dispute_reversal', 'payout_failure', 'adjustment'] }),
    order: OrNull(Type.String({ description: "The order's id." })),
    refund: OrNull(Type.String({ description: "The refund's id, for a refund." })),
    dispute: OrNull(Type.String({ description: "The dispute's id, for a dispute's withdrawal or reinstatement." })),
    reference: OrNull(Type.String({ description: "The merchant's reference of the order, as on every object of the order." })),
    currency: Type.String(),
    gross: Minor('Before fees: a charge\'s captured amount, a refund\'s (negative), a dispute\'s (negative).'),
    fees: Type.Object({
      percentage: Minor('The percentage fee.'),
      fixed: Minor('The fixed fee.'),
      other: Minor('Fees of any other kind (a dispute fee).'),
      total: Minor('Every fee of the item.'),
    }),
    net: Minor('gross less fees.total: what the item adds to the payout.'),
    created: IsoTime({ description: 'When the money moved.' }),
  },
  { $id: 'PayoutItem' },
);

export const PayoutSchema = Type.Object(
  {
    id: Type.String({ pattern: '^po_' }),
    object: Type.Literal('payout'),
    amount: Minor('The net paid out.'),
    currency: Type.String(),
    status: Type.String({ enum: ['pending', 'in_transit', 'paid', 'failed'] }),
    totals: Type.Object(
      {
        gross: Minor("The charges' captured amounts before fees."),
        fees: Minor('Every fee (positive).'),
        refunds: Minor('Refunds taken from the balance (zero or negative).'),
        disputes: Minor('Disputed amounts withdrawn, less those reinstated.'),
        adjustments: Minor("Anything else, such as a failed payout's money returned."),
        net: Minor('gross - fees + refunds + disputes + adjustments: the amount.'),
      },
    ),
    item_count: Type.Integer(),
    order_count: Type.Integer({ description: 'How many orders the items belong to.' }),
    destination: Type.String({ description: 'The bank account, masked: "DE89 •••• 3000".' }),
    arrival_date: Type.String({ format: 'date', description: 'When the money is expected at the bank (UTC day).' }),
    cutoff: IsoTime({ description: 'The run\'s cut-off: the payout holds what was settled until then.' }),
    failure_code: OrNull(Type.String({ description: 'Why the bank refused it, when failed.' })),
    livemode: Type.Boolean(),
    created: IsoTime(),
  },
  { $id: 'Payout' },
);

export const retrievePayoutSchema = {
  operationId: 'retrievePayout',
  summary: 'Retrieve a payout with its totals and its first 100 items',
  tags: ['payouts'],
  params: IdParams,
  querystring: NoQuery,
  response: {
    200: {
      ...Type.Intersect([
        Type.Ref('Payout'),
        Type.Object({
          items: Type.Object({
            object: Type.Literal('list'),
            url: Type.String({ description: 'Where the further items page: GET /v1/payouts/:id/items.' }),
            has_more: Type.Boolean(),
            data: Type.Array(Type.Ref('PayoutItem')),
          }),
        }),
      ]),
      description: 'The payout, with its first items.',
    },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
  },
};

export const listPayoutsSchema = {
  operationId: 'listPayouts',
  summary: 'List payouts, newest first',
  tags: ['payouts'],
  querystring: PayoutListQuery,
  response: { 200: { ...ListOf('Payout'), description: 'A page of payouts.' }, ...COMMON_ERRORS },
};

export const listPayoutItemsSchema = {
  operationId: 'listPayoutItems',
  summary: "A page of a payout's items, in order",
  tags: ['payouts'],
  params: IdParams,
  querystring: PayoutItemQuery,
  response: { 200: { ...ListOf('PayoutItem'), description: 'A page of items.' }, ...COMMON_ERRORS, ...NOT_FOUND },
};

export const exportPayoutItemsSchema = {
  operationId: 'exportPayoutItems',
  summary: "Every item of a payout as CSV, the reconciliation export",
  tags: ['payouts'],
  params: IdParams,
  querystring: NoQuery,
  produces: ['text/csv'],
  response: {
    200: {
      description: 'One line per item after a header line; amounts in minor units. See docs/money.md.',
      content: { 'text/csv': { schema: Type.String() } },
    },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    406: ErrorAnswer('Unused: the export is always text/csv.'),
  },
};

/** The shared schemas of this resource, added once to the app. */
export const PAYOUT_SCHEMAS = [PayoutItemSchema, PayoutSchema];
