import Type, { type Static } from 'typebox';
import {
  Body,
  BODY_ERRORS,
  COMMON_ERRORS,
  IdempotencyHeaders,
  IdParams,
  IsoTime,
  ListOf,
  NOT_FOUND,
  OptionalFlag,
  OptionalInteger,
  OptionalText,
  OrNull,
  STATE_CHANGE_ERRORS,
  OptionalStringList,
  NoBody,
  NoQuery,
  Text,
  Timestamp,
} from '../shared/schemas.ts';

// Every shape of /v1/webhook_endpoints, declared once.

const EVENT_LIST = '{param} must be an array of event type strings, e.g. ["order.paid"] or ["*"].';

export const CreateEndpointBody = Body(
  {
    url: Text({ description: 'https in live mode, never a private or loopback address; test mode may use http. Refused addresses are listed in docs/webhooks.md.' }),
    enabled_events: OptionalStringList(EVENT_LIST, { description: 'Event types, or ["*"] (the default) for all; at least one.' }),
    description: OptionalText({ description: 'At most 500 characters.' }),
  },
  'The request body must be a JSON object, e.g. {"url": "https://shop.example/webhooks", "enabled_events": ["*"]}.',
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Body(
  {
    url: OptionalText(),
    enabled_events: OptionalStringList(EVENT_LIST),
    description: OptionalText(),
    disabled: OptionalFlag({ description: 'true stops deliveries (disabled_reason by_merchant); false resumes them.' }),
  },
  'The request body must be a JSON object with url, enabled_events, description or disabled.',
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

export const RotateSecretBody = Body(
  { overlap_seconds: OptionalInteger({ description: 'How long the old secret keeps signing too: 1 to 604800 seconds; 86400 when omitted or 0.' }) },
  'The request body must be a JSON object, e.g. {"overlap_seconds": 86400}.',
  { optional: true },
);
export type RotateSecretBody = Static<typeof RotateSecretBody>;

export const ReplayBody = Body({ since: Timestamp({ description: 'Every event created at or after this time is queued again.' }) }, 'The request body must be a JSON object, e.g. {"since": "2030-01-01T00:00:00Z"}.');
export type ReplayBody = Static<typeof ReplayBody>;

export const EndpointSchema = Type.Object(
  {
    id: Type.String({ pattern: '^we_' }),
    object: Type.Literal('webhook_endpoint'),
    url: OrNull(Type.String()),
    enabled_events: Type.Array(Type.String()),
    description: Type.String(),
    status: Type.String({ enum: ['enabled', 'disabled'] }),
    disabled_reason: Type.Union([Type.Null(), Type.String({ enum: ['by_merchant', 'no_url', 'failing'] })]),
    is_default: Type.Boolean({ description: 'The endpoint every sandbox starts with; it can be disabled, not deleted.' }),
    livemode: Type.Boolean(),
    created: OrNull(IsoTime()),
  },
  { $id: 'WebhookEndpoint' },
);

export const EndpointWithSecretSchema = Type.Object(
  {
    ...EndpointSchema.properties,
    secret: Type.String({ pattern: '^whsec_', description: 'The signing secret; shown only in this answer.' }),
    old_secret_expires_at: Type.Optional(OrNull(IsoTime({ description: 'After a rotation: until when the previous secret still signs.' }))),
  },
  { $id: 'WebhookEndpointWithSecret' },
);

const tags = ['webhook_endpoints'];
const endpointAnswer = (description: string) => ({ ...Type.Ref('WebhookEndpoint'), description });
const withSecretAnswer = (description: string) => ({ ...Type.Ref('WebhookEndpointWithSecret'), description });

export const createEndpointSchema = {
  operationId: 'createWebhookEndpoint',
  summary: 'Register a webhook endpoint; the response carries its signing secret, once',
  tags,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateEndpointBody,
  response: { 201: withSecretAnswer('The endpoint with its secret.'), ...COMMON_ERRORS, ...BODY_ERRORS, ...STATE_CHANGE_ERRORS },
};

export const listEndpointsSchema = {
  operationId: 'listWebhookEndpoints',
  summary: 'List webhook endpoints, newest first',
  tags,
  querystring: NoQuery,
  response: { 200: { ...ListOf('WebhookEndpoint'), description: 'Every endpoint of this mode (at most 16).' }, ...COMMON_ERRORS },
};

export const retrieveEndpointSchema = {
  operationId: 'retrieveWebhookEndpoint',
  summary: 'Retrieve a webhook endpoint',
  tags,
  params: IdParams,
  querystring: NoQuery,
  response: { 200: endpointAnswer('The endpoint.'), ...COMMON_ERRORS, ...NOT_FOUND },
};

export const updateEndpointSchema = {
  operationId: 'updateWebhookEndpoint',
  summary: 'Change the URL, the events, the description or the disabled flag',
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: UpdateEndpointBody,
  response: { 200: endpointAnswer('The endpoint.'), ...COMMON_ERRORS, ...NOT_FOUND, ...BODY_ERRORS, ...STATE_CHANGE_ERRORS },
};

export const deleteEndpointSchema = {
  operationId: 'deleteWebhookEndpoint',
  summary: 'Delete a webhook endpoint; its queued deliveries stop',
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: NoBody,
  response: {
    200: Type.Object({ id: Type.String(), object: Type.Literal('webhook_endpoint'), deleted: Type.Literal(true) }, { description: 'The endpoint is gone.' }),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...STATE_CHANGE_ERRORS,
  },
};

export const rotateSecretSchema = {
  operationId: 'rotateWebhookSecret',
  summary: 'Issue a new secret; the old one keeps signing for overlap_seconds (default 86400, at most 7 days)',
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: RotateSecretBody,
  response: { 200: withSecretAnswer('The endpoint with its new secret and old_secret_expires_at.'), ...COMMON_ERRORS, ...NOT_FOUND, ...BODY_ERRORS, ...STATE_CHANGE_ERRORS },
};

export const replaySchema = {
  operationId: 'replayEvents',
  summary: 'Queue every event since a time for redelivery to this endpoint',
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: ReplayBody,
  response: {
    200: Type.Object({ object: Type.Literal('replay'), endpoint_id: Type.String(), queued: Type.Integer({ description: 'How many events were queued.' }) }, { description: 'The events are queued.' }),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    ...STATE_CHANGE_ERRORS,
  },
};

/** The shared schemas of this resource, added once to the app. */
export const ENDPOINT_SCHEMAS = [EndpointSchema, EndpointWithSecretSchema];
