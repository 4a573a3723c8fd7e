import type { Client } from '@connectrpc/connect';
import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { FastifyInstance } from 'fastify';
import type { WebhookEndpointService } from '../../../src/gen/checkout/v1/webhook_pb.ts';
import { coreCall } from '../shared/core-call.ts';
import { invalidParam } from '../shared/rest-error.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';
import { isoOrNull } from '../shared/time-json.ts';
import type { IdParams } from '../shared/schemas.ts';
import { endpointJson } from './endpoint-json.ts';
import {
  createEndpointSchema,
  deleteEndpointSchema,
  listEndpointsSchema,
  replaySchema,
  retrieveEndpointSchema,
  rotateSecretSchema,
  updateEndpointSchema,
  type CreateEndpointBody,
  type ReplayBody,
  type RotateSecretBody,
  type UpdateEndpointBody,
} from './schemas.ts';

/**
 * enabled_events of a create: absent means every event. An empty list is
 * refused here because Protobuf cannot tell it from an absent one.
 * @throws RestError enabled_events_invalid
 */
function subscription(events: string[] | null | undefined): string[] {
  if (events?.length === 0) throw invalidParam('enabled_events_invalid', 'enabled_events', 'enabled_events needs at least one event type, or "*" for all; leave it out to subscribe to every event.');
  return events ?? ['*'];
}

/** Registers /v1/webhook_endpoints, each route a call to checkout.v1.WebhookEndpointService. */
export function registerWebhookEndpointRoutes(app: FastifyInstance, endpoints: Client<typeof WebhookEndpointService>): void {
  app.post<{ Body: CreateEndpointBody }>('/v1/webhook_endpoints', { schema: createEndpointSchema }, async (req, reply) => {
    const body = req.body;
    const res = await endpoints.createWebhookEndpoint({ url: body.url, enabledEvents: subscription(body.enabled_events), description: body.description ?? '' }, coreCall(req));
    return reply.code(201).send({ ...endpointJson(res.endpoint!), secret: res.secret });
  });

  app.get('/v1/webhook_endpoints', { schema: listEndpointsSchema }, async (req) => {
    const res = await endpoints.listWebhookEndpoints({}, coreCall(req));
    return { object: 'list', url: '/v1/webhook_endpoints', has_more: false, data: res.endpoints.map(endpointJson) };
  });

  app.get<{ Params: IdParams }>('/v1/webhook_endpoints/:id', { schema: retrieveEndpointSchema }, async (req) => {
    const res = await endpoints.getWebhookEndpoint({ id: req.params.id }, coreCall(req));
    return endpointJson(res.endpoint!);
  });

  app.patch<{ Params: IdParams; Body: UpdateEndpointBody }>('/v1/webhook_endpoints/:id', { schema: updateEndpointSchema }, async (req) => {
    const body = req.body;
    const events = body.enabled_events ?? undefined;
    const res = await endpoints.updateWebhookEndpoint(
      {
        id: req.params.id,
        url: body.url ?? undefined,
        enabledEvents: events ?? [],
        updateEvents: events !== undefined,
        disabled: body.disabled ?? undefined,
        description: body.description ?? undefined,
      },
      coreCall(req),
    );
    return endpointJson(res.endpoint!);
  });

  app.delete<{ Params: IdParams }>('/v1/webhook_endpoints/:id', { schema: deleteEndpointSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await endpoints.deleteWebhookEndpoint({ id: req.params.id }, coreCall(req));
    return { id: res.id, object: 'webhook_endpoint', deleted: true };
  });

  app.post<{ Params: IdParams; Body: RotateSecretBody }>(
    '/v1/webhook_endpoints/:id/rotate_secret',
    { schema: rotateSecretSchema, preValidation: emptyBodyIsEmptyObject },
    async (req) => {
      const res = await endpoints.rotateWebhookSecret({ id: req.params.id, overlapSeconds: req.body.overlap_seconds ?? 0 }, coreCall(req));
      return { ...endpointJson(res.endpoint!), secret: res.secret, old_secret_expires_at: isoOrNull(res.oldSecretExpiresAt) };
    },
  );

  app.post<{ Params: IdParams; Body: ReplayBody }>('/v1/webhook_endpoints/:id/replay', { schema: replaySchema }, async (req) => {
    const res = await endpoints.replayEvents({ endpointId: req.params.id, since: timestampFromDate(new Date(req.body.since)) }, coreCall(req));
    return { object: 'replay', endpoint_id: req.params.id, queued: res.queued };
  });
}
