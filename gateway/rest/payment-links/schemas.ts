import Type, { type Static } from 'typebox';
import { PAYMENT_LINK_TYPES } from '../../../src/modules/payment-link/domain/payment-link.entity.ts';
import {
  Amount,
  Body,
  BODY_ERRORS,
  COMMON_ERRORS,
  Enum,
  ErrorAnswer,
  IdempotencyHeaders,
  IdParams,
  IsoTime,
  ListOf,
  NOT_FOUND,
  NoBody,
  NoQuery,
  OptionalList,
  OptionalText,
  OptionalTimestamp,
  OrNull,
  STATE_CHANGE_ERRORS,
  Text,
} from '../shared/schemas.ts';
import { ListQuery } from '../shared/list-query.ts';
import { LineItemInput } from '../orders/schemas.ts';

// Every shape of /v1/links, declared once: Fastify validates and serializes with these, and
// /v1/openapi.json describes them.

const tags = ['payment_links'];

export const CreatePaymentLinkBody = Body(
  {
    amount: Amount({ description: 'Minor units of currency each payment of the link charges; the order\'s rules (e.g. 2500 is 25.00 EUR).' }),
    currency: Text({ description: 'ISO 4217, uppercase, e.g. EUR.' }),
    reference: Text({ description: 'Your reference, 1-255 characters; every order of the link carries it.' }),
    type: Enum(PAYMENT_LINK_TYPES, {
      description: 'single_use: exactly one successful payment, even with customers paying at the same moment. collecting: any number (reusable).',
    }),
    line_items: OptionalList(LineItemInput, 'line_items must be an array of {name, amount} objects.', { description: 'At most 100; when given, their amounts must sum to amount.' }),
    return_url: OptionalText({ description: 'Absolute http(s) URL the customer returns to after paying.' }),
    expires_at: OptionalTimestamp({ description: 'When the link stops taking payment: 5 minutes to 366 days ahead; never when omitted.' }),
  },
  'The request body must be a JSON object, e.g. {"amount": 1000, "currency": "EUR", "reference": "invoice-1", "type": "single_use"}.',
);
export type CreatePaymentLinkBody = Static<typeof CreatePaymentLinkBody>;

export const PaymentLinkListQuery = ListQuery({});
export type PaymentLinkListQuery = Static<typeof PaymentLinkListQuery>;

export const PaymentLinkSchema = Type.Object(
  {
    id: Type.String({ pattern: '^plink_[0-9A-Za-z]{22,}$' }),
    object: Type.Literal('payment_link'),
    url: Type.String({ format: 'uri', description: '<checkout host>/l/<unguessable suffix>: share it with your customers. Its page is the payment form; each customer who starts to pay gets an order of their own.' }),
    type: Type.String({ enum: ['single_use', 'collecting'] }),
    status: Type.String({
      enum: ['active', 'deactivated', 'expired', 'completed'],
      description: 'active: it takes payment. deactivated by you, expired (expires_at passed), or completed (a single-use link whose payment succeeded): its page says so and nothing is created.',
    }),
    active: Type.Boolean({ description: 'True while status is active.' }),
    amount: Type.Integer({ description: 'Minor units.' }),
    currency: Type.String(),
    reference: Type.String(),
    line_items: Type.Array(Type.Object({ name: Type.String(), amount: Type.Integer() })),
    return_url: OrNull(Type.String()),
    expires_at: OrNull(IsoTime({ description: 'When it stops taking payment; null: never.' })),
    completed_payments: Type.Integer({ description: 'Orders of the link that were paid (at most 1 for single_use). Its orders: GET /v1/orders?payment_link={id}.' }),
    deactivated_at: OrNull(IsoTime()),
    created: IsoTime(),
    livemode: Type.Boolean(),
  },
  { $id: 'PaymentLink' },
);

const linkAnswer = (description: string) => ({ ...Type.Ref('PaymentLink'), description });

export const createPaymentLinkSchema = {
  operationId: 'createPaymentLink',
  summary: 'Create a payment link, single-use or collecting, with an optional expiry',
  tags,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreatePaymentLinkBody,
  response: {
    201: linkAnswer('The link, active (also for an idempotent replay).'),
    ...COMMON_ERRORS,
    ...BODY_ERRORS,
    ...STATE_CHANGE_ERRORS,
  },
};

export const retrievePaymentLinkSchema = {
  operationId: 'retrievePaymentLink',
  summary: 'Retrieve a payment link',
  tags,
  params: IdParams,
  querystring: NoQuery,
  response: { 200: linkAnswer('The link.'), ...COMMON_ERRORS, ...NOT_FOUND },
};

export const listPaymentLinksSchema = {
  operationId: 'listPaymentLinks',
  summary: 'List payment links, newest first',
  tags,
  querystring: PaymentLinkListQuery,
  response: { 200: { ...ListOf('PaymentLink'), description: 'A page of payment links.' }, ...COMMON_ERRORS },
};

export const deactivatePaymentLinkSchema = {
  operationId: 'deactivatePaymentLink',
  summary: 'Deactivate a payment link: its page takes no payment, and its open orders take no payment',
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: NoBody,
  response: {
    200: linkAnswer('The link, deactivated (a deactivated link is answered unchanged).'),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer('The link changed concurrently (concurrent_change); retry with the same Idempotency-Key.'),
    422: ErrorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused).'),
  },
};

/** The shared schemas of this resource, added once to the app. */
export const PAYMENT_LINK_SCHEMAS = [PaymentLinkSchema];
