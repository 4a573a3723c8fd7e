import Type, { type Static } from 'typebox';
import { Body, BODY_ERRORS, COMMON_ERRORS, IdempotencyHeaders, IdParams, IsoTime, ListOf, NoQuery, NOT_FOUND, OptionalText, OrNull, STATE_CHANGE_ERRORS } from '../shared/schemas.ts';
import { Filter, ListQuery } from '../shared/list-query.ts';

// Every shape of /v1/events, declared once.

export const EventListQuery = ListQuery({
  type: Filter('Only events of this type, e.g. order.paid.'),
  order_id: Filter('Only events of this order.'),
  reference: Filter("Only events carrying this merchant reference."),
});
export type EventListQuery = Static<typeof EventListQuery>;

export const RedeliverBody = Body({ endpoint_id: OptionalText({ description: 'Only to this endpoint; every subscribed endpoint when omitted.' }) }, 'The request body must be a JSON object, e.g. {"endpoint_id": "we_…"} or {}.', { optional: true });
export type RedeliverBody = Static<typeof RedeliverBody>;

export const EventSchema = Type.Object(
  {
    id: Type.String({ pattern: '^evt_' }),
    object: Type.Literal('event'),
    type: Type.String({ description: 'e.g. order.created, order.paid, order.failed, order.expired.' }),
    created: OrNull(IsoTime()),
    livemode: Type.Boolean(),
    subject: Type.Object({ type: Type.String({ description: 'What the event is about, e.g. order.' }), id: Type.String() }),
    order_id: OrNull(Type.String({ description: 'The order the event belongs to, when it has one.' })),
    reference: OrNull(Type.String({ description: "The merchant's reference, when the subject has one." })),
    sequence: Type.Integer({ description: 'Position among the events of its subject, from 1.' }),
    data: Type.Object({}, { additionalProperties: true, description: 'The subject as it was when the event happened (the webhook body\'s data).' }),
  },
  { $id: 'Event' },
);

export const DeliveryAttemptSchema = Type.Object(
  {
    id: Type.String(),
    object: Type.Literal('delivery_attempt'),
    event_id: Type.String(),
    endpoint_id: Type.String(),
    attempted_at: OrNull(IsoTime()),
    status_code: OrNull(Type.Integer()),
    error: OrNull(Type.String()),
    duration_ms: Type.Integer(),
    response_excerpt: Type.String({ description: 'At most the first 1024 bytes of the response body (UTF-8, cut on a character boundary).' }),
  },
  { $id: 'DeliveryAttempt' },
);

const tags = ['events'];

export const listEventsSchema = {
  operationId: 'listEvents',
  summary: 'List events, newest first',
  tags,
  querystring: EventListQuery,
  response: { 200: { ...ListOf('Event'), description: 'A page of events.' }, ...COMMON_ERRORS },
};

export const retrieveEventSchema = {
  operationId: 'retrieveEvent',
  summary: 'Retrieve an event',
  tags,
  params: IdParams,
  querystring: NoQuery,
  response: { 200: { ...Type.Ref('Event'), description: 'The event.' }, ...COMMON_ERRORS, ...NOT_FOUND },
};

export const listDeliveriesSchema = {
  operationId: 'listDeliveryAttempts',
  summary: 'Every delivery attempt of an event, oldest first',
  tags,
  params: IdParams,
  querystring: NoQuery,
  response: { 200: { ...ListOf('DeliveryAttempt'), description: 'The attempts.' }, ...COMMON_ERRORS, ...NOT_FOUND },
};

export const redeliverSchema = {
  operationId: 'redeliverEvent',
  summary: 'Send an event again, to one endpoint or every subscribed one',
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: RedeliverBody,
  response: {
    200: Type.Object({ object: Type.Literal('redelivery'), event_id: Type.String(), queued: Type.Integer({ description: 'How many deliveries were queued.' }) }, { description: 'The deliveries are queued.' }),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    ...STATE_CHANGE_ERRORS,
  },
};

/** The shared schemas of this resource, added once to the app. */
export const EVENT_SCHEMAS = [EventSchema, DeliveryAttemptSchema];
