import Type, { type Static } from 'typebox';
import { CAPTURE_METHODS } from '../../../src/modules/order/domain/capture.ts';
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
  Nested,
  NOT_FOUND,
  NoBody,
  NoQuery,
  OptionalFlag,
  OptionalList,
  OptionalText,
  OptionalTimestamp,
  OrNull,
  STATE_CHANGE_ERRORS,
  Text,
} from '../shared/schemas.ts';
import { Filter, ListQuery } from '../shared/list-query.ts';

// Every shape of /v1/orders, declared once: Fastify validates and serializes with these, and
// /v1/openapi.json describes them.

export const LineItemInput = Nested(
  {
    name: Text({ description: '1-255 characters, shown on the checkout page and the receipt.' }),
    amount: Amount({ description: 'Minor units; not negative.' }),
  },
  '{param} must be an object with name and amount.',
);

export const CreateOrderBody = Body(
  {
    amount: Amount({ description: 'Minor units of currency, at least 1 and at most 999,999,999 major units (e.g. 2500 is 25.00 EUR; 2500 JPY is 2500 yen).' }),
    currency: Text({ description: 'ISO 4217, uppercase, e.g. EUR.' }),
    reference: Text({ description: 'Your reference: any Unicode, 1-255 characters. It is on every event, webhook, receipt and list filter.' }),
    line_items: OptionalList(LineItemInput, 'line_items must be an array of {name, amount} objects.', { description: 'At most 100; when given, their amounts must sum to amount.' }),
    return_url: OptionalText({ description: 'Absolute http(s) URL the customer returns to after paying, with order_id and reference added.' }),
    expires_at: OptionalTimestamp({ description: 'When the checkout closes: 5 minutes to 30 days ahead; 24 hours when omitted.' }),
    capture_method: Type.Optional(
      Enum(CAPTURE_METHODS, {
        description: 'automatic (the default): captured as the customer pays. manual: only authorized then (status authorized); capture it with POST /v1/orders/{id}/capture within 7 days, or it is released.',
      }),
    ),
    customer: OptionalText({ description: 'A customer of yours (cus_…): the checkout page offers "save this card" and lists the customer\'s saved cards for one-click payment.' }),
    card: OptionalText({ description: 'With customer and confirm: a saved card (card_…) of that customer to charge at once.' }),
    confirm: OptionalFlag({
      description:
        'With customer and card: charge the card now, off-session (merchant-initiated, no page, no 3-D Secure challenge; a card whose issuer asks for one declines with authentication_required). The answer is the paid or failed order.',
    }),
  },
  'The request body must be a JSON object, e.g. {"amount": 1000, "currency": "EUR", "reference": "order-1"}.',
);
export type CreateOrderBody = Static<typeof CreateOrderBody>;

export const OrderListQuery = ListQuery({
  reference: Filter('Only orders with exactly this reference.'),
  payment_link: Filter('Only the orders created by this payment link (plink_…): the orders its customers started to pay, paid or not.'),
});
export type OrderListQuery = Static<typeof OrderListQuery>;

export const PaymentAttemptSchema = Type.Object(
  {
    id: Type.String({ pattern: '^att_' }),
    method: Type.String({ enum: ['card', 'wallet', 'bank_transfer'] }),
    route: Type.String({ description: 'Acquirer route, e.g. simulated_alpha, simulated_beta, virtual_iban.' }),
    status: Type.String({ enum: ['processing', 'requires_authentication', 'authorized', 'succeeded', 'failed', 'canceled', 'reversal_pending', 'reversed'] }),
    decline_code: OrNull(Type.String()),
    authentication: Type.String({ enum: ['not_required', 'required', 'passed', 'failed', 'abandoned'] }),
    card_brand: OrNull(Type.String()),
    card_last4: OrNull(Type.String()),
    retry: Type.Boolean({ description: 'True when this attempt retried a soft decline on the alternative route.' }),
    card: OrNull(Type.String({ description: 'The saved card (card_…) this attempt charged, when it was one.' })),
    created: IsoTime(),
  },
  { $id: 'PaymentAttempt' },
);

export const OrderSchema = Type.Object(
  {
    id: Type.String({ pattern: '^ord_[0-9A-Za-z]{22,}$' }),
    object: Type.Literal('order'),
    reference: Type.String(),
    amount: Type.Integer({ description: 'Minor units.' }),
    currency: Type.String(),
    status: Type.String({
      enum: ['pending', 'failed', 'authorized', 'paid', 'expired', 'partially_refunded', 'refunded', 'voided'],
      description:
        'failed is not final: the customer may pay until expires_at. A paid order becomes partially_refunded, then refunded. A manual order is authorized when paid, then paid once captured, or voided.',
    }),
    checkout_url: Type.String({ format: 'uri', description: '<checkout host>/c/<order id suffix>' }),
    line_items: Type.Array(Type.Object({ name: Type.String(), amount: Type.Integer() })),
    return_url: OrNull(Type.String()),
    method: OrNull(Type.String({ description: 'Payment method, once paid.' })),
    settlement: Type.Union([Type.Null(), Type.Object({ currency: Type.String(), amount: Type.Integer() })], {
      description: 'What the merchant receives, in the settlement currency, once paid.',
    }),
    refunds: Type.Array(Type.Ref('Refund'), { description: 'Every refund of the order, oldest first.' }),
    amount_refunded: Type.Integer({ description: 'Minor units refunded so far (succeeded refunds).' }),
    capture_method: Type.String({ enum: ['automatic', 'manual'] }),
    amount_captured: OrNull(Type.Integer({ description: 'Minor units captured, once captured: less than amount after a partial capture, and what refunds are bounded by.' })),
    authorization_expires_at: OrNull(IsoTime({ description: 'While authorized: when the authorization is released unless captured (7 days after it was made).' })),
    disputes: Type.Array(Type.Ref('Dispute'), { description: 'Every dispute of the order, oldest first; the order keeps its status while disputed.' }),
    attempts: Type.Array(Type.Ref('PaymentAttempt')),
    created: IsoTime(),
    expires_at: IsoTime(),
    livemode: Type.Boolean(),
    subscription: OrNull(Type.String({ pattern: '^sub_', description: 'The subscription whose cycle the order charges; null for other orders.' })),
    subscription_cycle: OrNull(Type.Integer({ description: 'The cycle (1, 2, …) of the subscription the order charges.' })),
    payment_link: OrNull(Type.String({ pattern: '^plink_', description: 'The payment link that created the order (one order per customer who started to pay it); null for orders created through POST /v1/orders.' })),
    customer: OrNull(Type.String({ description: 'The customer (cus_…) the order names, or null.' })),
  },
  { $id: 'Order' },
);

/** The answer of the create that made an order: the order, and once, its client secret. */
export const CreatedOrderSchema = Type.Object(
  {
    ...OrderSchema.properties,
    client_secret: Type.Optional(
      Type.String({
        pattern: '^ord_[0-9A-Za-z]+_secret_',
        description:
          'Only in the answer that created the order (not on an idempotent replay, and never on a retrieve, a list or an event): hand it to your app or page, which pays this one order through CheckoutService with your publishable key and this secret (header checkout-client-secret). Valid until expires_at, at most 24 hours. Never put it in a URL or a log.',
      }),
    ),
  },
  { $id: 'CreatedOrder' },
);

const orderAnswer = (description: string) => ({ ...Type.Ref('Order'), description });

export const createOrderSchema = {
  operationId: 'createOrder',
  summary: 'Create an order and receive its checkout URL',
  tags: ['orders'],
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateOrderBody,
  response: {
    201: { ...Type.Ref('CreatedOrder'), description: 'The order, status pending (also for an idempotent replay, without client_secret); with confirm, paid or failed as the off-session charge ended.' },
    ...COMMON_ERRORS,
    ...BODY_ERRORS,
    ...STATE_CHANGE_ERRORS,
    422: ErrorAnswer('Idempotency-Key reused with a different request (idempotency_key_reused).'),
  },
};

export const retrieveOrderSchema = {
  operationId: 'retrieveOrder',
  summary: 'Retrieve an order',
  tags: ['orders'],
  params: IdParams,
  querystring: NoQuery,
  response: { 200: orderAnswer('The order.'), ...COMMON_ERRORS, ...NOT_FOUND },
};

export const listOrdersSchema = {
  operationId: 'listOrders',
  summary: 'List orders, newest first',
  tags: ['orders'],
  querystring: OrderListQuery,
  response: { 200: { ...ListOf('Order'), description: 'A page of orders.' }, ...COMMON_ERRORS },
};

export const voidOrderSchema = {
  operationId: 'voidOrder',
  summary: 'Void an authorized order, or a paid one before settlement: the money is released, no fee is charged',
  tags: ['orders'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: NoBody,
  response: {
    200: orderAnswer('The order, voided (a voided order is answered unchanged). While the acquirer has not answered, still paid; the void completes by itself.'),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer('The order is neither authorized nor paid, or has refunds (order_not_voidable: refund instead); it was settled (order_already_settled); or it changed concurrently (concurrent_change).'),
    422: ErrorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused).'),
  },
};

export const CaptureOrderBody = Body(
  {
    amount: Type.Optional(Amount({ description: 'Minor units, 1 up to the authorized amount; the whole authorized amount when omitted. The rest of the authorization is released.' })),
  },
  'The request body must be a JSON object, e.g. {"amount": 1000}, or empty.',
  { optional: true },
);
export type CaptureOrderBody = Static<typeof CaptureOrderBody>;

export const captureOrderSchema = {
  operationId: 'captureOrder',
  summary: 'Capture an authorized order (capture_method manual), in full or in part',
  tags: ['orders'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CaptureOrderBody,
  response: {
    200: orderAnswer('The order, paid, with amount_captured.'),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer('The order is not authorized (order_not_capturable), or it changed concurrently (concurrent_change).'),
    422: ErrorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused), or the acquirer declined the capture (capture_declined).'),
  },
};

/** The shared schemas of this resource, added once to the app (responses refer to them by $id). */
export const ORDER_SCHEMAS = [PaymentAttemptSchema, OrderSchema, CreatedOrderSchema];

export const expireOrderSchema = {
  operationId: 'expireOrder',
  summary: 'Expire an open order now (as Stripe expires a Checkout Session): its checkout takes no payment any more',
  description:
    'A pending or failed order (its customer has not paid) becomes expired at once, with order.expired as when its time runs out; an open 3-D Secure challenge is canceled. An expired order is answered unchanged.',
  tags: ['orders'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: NoBody,
  response: {
    200: orderAnswer('The order, expired (an expired order is answered unchanged).'),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer(
      'The order is not open: paid, authorized, refunded or voided (order_not_open: void or refund it instead); a card payment is in flight (payment_in_progress: retry once it has finished); or it changed concurrently (concurrent_change).',
    ),
    422: ErrorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused).'),
  },
};
