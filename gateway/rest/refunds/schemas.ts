import Type, { type Static } from 'typebox';
import { REFUND_REASONS } from '../../../src/modules/refund/domain/refund.entity.ts';
import { Amount, Body, BODY_ERRORS, COMMON_ERRORS, ErrorAnswer, IdempotencyHeaders, IdParams, IsoTime, NoQuery, NOT_FOUND, OneOf, OptionalText, OrNull } from '../shared/schemas.ts';

// Every shape of /v1/orders/:id/refunds, declared once.

export const CreateRefundBody = Body(
  {
    amount: Type.Optional(Amount({ description: 'Minor units; the whole amount not yet refunded when omitted.' })),
    reason: OneOf(REFUND_REASONS, { description: 'requested_by_customer, duplicate, fraudulent, product_not_received or other.' }),
    note: OptionalText({ description: 'Free text for your records, at most 500 characters.' }),
  },
  'The request body must be a JSON object, e.g. {"amount": 1000, "reason": "requested_by_customer"}.',
);
export type CreateRefundBody = Static<typeof CreateRefundBody>;

export const RefundSchema = Type.Object(
  {
    id: Type.String({ pattern: '^re_' }),
    object: Type.Literal('refund'),
    order: Type.String({ description: 'The refunded order\'s id.' }),
    reference: Type.String({ description: 'The order\'s reference, as on every object of the order.' }),
    amount: Type.Integer({ description: 'Minor units of currency.' }),
    currency: Type.String(),
    reason: Type.String({ enum: [...REFUND_REASONS] }),
    note: OrNull(Type.String()),
    status: Type.String({ enum: ['pending', 'succeeded', 'failed', 'canceled'], description: 'pending holds its amount: no other refund can spend it.' }),
    failure_code: OrNull(Type.String({ description: 'Why the acquirer refused it, when failed.' })),
    created: OrNull(IsoTime()),
  },
  { $id: 'Refund' },
);

export const createRefundSchema = {
  operationId: 'createRefund',
  summary: 'Refund all or part of a paid order',
  tags: ['refunds'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateRefundBody,
  response: {
    201: { ...Type.Ref('Refund'), description: 'The refund: succeeded, failed (the acquirer refused), or pending.' },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer('The order was never paid (order_not_refundable), or it changed concurrently (concurrent_change).'),
    422: ErrorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused).'),
  },
};

/** The shared schemas of this resource, added once to the app. */
export const REFUND_SCHEMAS = [RefundSchema];
