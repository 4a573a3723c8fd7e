import type { Client } from '@connectrpc/connect';
import { timestampDate } from '@bufbuild/protobuf/wkt';
import type { FastifyInstance } from 'fastify';
import type { EventService, WebhookEndpointService } from '../../src/gen/checkout/v1/webhook_pb.ts';
import { jsonObject, optionalString, optionalTimestamp, rejectUnknown, requiredString } from './json-body.ts';
import { coreCall } from './core-call.ts';
import { invalidParam } from './rest-error.ts';
import { deliveryAttemptJson, endpointJson, eventJson } from './webhook-json.ts';

function stringArray(obj: Record<string, unknown>, key: string): string[] | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || value.some((v) => typeof v !== 'string')) {
    throw invalidParam('parameter_invalid_array', key, `${key} must be an array of event type strings, e.g. ["order.paid"] or ["*"].`);
  }
  return value as string[];
}

/**
 * enabled_events of a create: absent means every event. An empty list is
 * refused here because Protobuf cannot tell it from an absent one.
 * @throws RestError enabled_events_invalid
 */
function subscription(obj: Record<string, unknown>): string[] | undefined {
  const events = stringArray(obj, 'enabled_events');
  if (events?.length === 0) throw invalidParam('enabled_events_invalid', 'enabled_events', 'enabled_events needs at least one event type, or "*" for all; leave it out to subscribe to every event.');
  return events;
}

function optionalBoolean(obj: Record<string, unknown>, key: string): boolean | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') throw invalidParam('parameter_invalid_boolean', key, `${key} must be true or false.`);
  return value;
}

function optionalInteger(obj: Record<string, unknown>, key: string): number | undefined {
  const value = obj[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw invalidParam('parameter_invalid_integer', key, `${key} must be an integer.`);
  return value;
}

const CREATE_FIELDS = new Set(['url', 'enabled_events', 'description']);
const UPDATE_FIELDS = new Set(['url', 'enabled_events', 'description', 'disabled']);

/** Registers /v1/webhook_endpoints and /v1/events. */
export function registerWebhookRoutes(app: FastifyInstance, endpoints: Client<typeof WebhookEndpointService>, events: Client<typeof EventService>): void {
  app.post('/v1/webhook_endpoints', async (req, reply) => {
    const body = jsonObject(req.body, 'body', 'The request body must be a JSON object, e.g. {"url": "https://shop.example/webhooks", "enabled_events": ["*"]}.');
    rejectUnknown(body, CREATE_FIELDS, '');
    const res = await endpoints.createWebhookEndpoint(
      { url: requiredString(body, 'url', 'url'), enabledEvents: subscription(body) ?? ['*'], description: optionalString(body, 'description', 'description') ?? '' },
      coreCall(req),
    );
    return reply.code(201).send({ ...endpointJson(res.endpoint!), secret: res.secret });
  });

  app.get('/v1/webhook_endpoints', async (req) => {
    const res = await endpoints.listWebhookEndpoints({}, coreCall(req));
    return { object: 'list', url: '/v1/webhook_endpoints', has_more: false, data: res.endpoints.map(endpointJson) };
  });

  app.get<{ Params: { id: string } }>('/v1/webhook_endpoints/:id', async (req) => {
    const res = await endpoints.getWebhookEndpoint({ id: req.params.id }, coreCall(req));
    return endpointJson(res.endpoint!);
  });

  app.patch<{ Params: { id: string } }>('/v1/webhook_endpoints/:id', async (req) => {
    const body = jsonObject(req.body, 'body', 'The request body must be a JSON object with url, enabled_events, description or disabled.');
    rejectUnknown(body, UPDATE_FIELDS, '');
    const events = stringArray(body, 'enabled_events');
    const res = await endpoints.updateWebhookEndpoint(
      {
        id: req.params.id,
        url: optionalString(body, 'url', 'url'),
        enabledEvents: events ?? [],
        updateEvents: events !== undefined,
        disabled: optionalBoolean(body, 'disabled'),
        description: optionalString(body, 'description', 'description'),
      },
      coreCall(req),
    );
    return endpointJson(res.endpoint!);
  });

  app.delete<{ Params: { id: string } }>('/v1/webhook_endpoints/:id', async (req) => {
    const res = await endpoints.deleteWebhookEndpoint({ id: req.params.id }, coreCall(req));
    return { id: res.id, object: 'webhook_endpoint', deleted: true };
  });

  app.post<{ Params: { id: string } }>('/v1/webhook_endpoints/:id/rotate_secret', async (req) => {
    const body = req.body === undefined ? {} : jsonObject(req.body, 'body', 'The request body must be a JSON object, e.g. {"overlap_seconds": 86400}.');
    rejectUnknown(body, new Set(['overlap_seconds']), '');
    const res = await endpoints.rotateWebhookSecret({ id: req.params.id, overlapSeconds: optionalInteger(body, 'overlap_seconds') ?? 0 }, coreCall(req));
    return { ...endpointJson(res.endpoint!), secret: res.secret, old_secret_expires_at: res.oldSecretExpiresAt ? timestampDate(res.oldSecretExpiresAt).toISOString() : null };
  });

  app.post<{ Params: { id: string } }>('/v1/webhook_endpoints/:id/replay', async (req) => {
    const body = jsonObject(req.body, 'body', 'The request body must be a JSON object, e.g. {"since": "2030-01-01T00:00:00Z"}.');
    rejectUnknown(body, new Set(['since']), '');
    const since = optionalTimestamp(body, 'since');
    if (!since) throw invalidParam('parameter_missing', 'since', 'Missing required parameter: since (ISO 8601).');
    const res = await endpoints.replayEvents({ endpointId: req.params.id, since }, coreCall(req));
    return { object: 'replay', endpoint_id: req.params.id, queued: res.queued };
  });

  app.get('/v1/events', async (req) => {
    const query = req.query as Record<string, unknown>;
    const known = new Set(['limit', 'starting_after', 'type', 'order_id', 'reference']);
    for (const [key, value] of Object.entries(query)) {
      if (!known.has(key)) throw invalidParam('parameter_unknown', key, `Received unknown query parameter: ${key}. Known: ${[...known].join(', ')}.`);
      if (typeof value !== 'string') throw invalidParam('parameter_invalid_string', key, `${key} must be given once.`);
    }
    const limit = query.limit as string | undefined;
    if (limit !== undefined && !/^\d{1,6}$/.test(limit)) throw invalidParam('limit_invalid', 'limit', 'limit must be an integer from 1 to 100.');
    const res = await events.listEvents(
      {
        limit: limit === undefined ? 0 : Number(limit) || -1,
        startingAfter: query.starting_after as string | undefined,
        type: query.type as string | undefined,
        orderId: query.order_id as string | undefined,
        reference: query.reference as string | undefined,
      },
      coreCall(req),
    );
    return { object: 'list', url: '/v1/events', has_more: res.hasMore, data: res.events.map(eventJson) };
  });

  app.get<{ Params: { id: string } }>('/v1/events/:id', async (req) => {
    const res = await events.getEvent({ id: req.params.id }, coreCall(req));
    return eventJson(res.event!);
  });

  app.get<{ Params: { id: string } }>('/v1/events/:id/deliveries', async (req) => {
    const res = await events.listDeliveryAttempts({ eventId: req.params.id }, coreCall(req));
    return { object: 'list', url: `/v1/events/${req.params.id}/deliveries`, has_more: false, data: res.attempts.map(deliveryAttemptJson) };
  });

  app.post<{ Params: { id: string } }>('/v1/events/:id/redeliver', async (req) => {
    const body = req.body === undefined ? {} : jsonObject(req.body, 'body', 'The request body must be a JSON object, e.g. {"endpoint_id": "we_…"} or {}.');
    rejectUnknown(body, new Set(['endpoint_id']), '');
    const res = await events.redeliverEvent({ eventId: req.params.id, endpointId: optionalString(body, 'endpoint_id', 'endpoint_id') ?? '' }, coreCall(req));
    return { object: 'redelivery', event_id: req.params.id, queued: res.queued };
  });
}
