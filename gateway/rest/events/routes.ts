import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { EventService } from '../../../src/gen/checkout/v1/webhook_pb.ts';
import { coreCall } from '../shared/core-call.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';
import { page } from '../shared/list-query.ts';
import type { IdParams } from '../shared/schemas.ts';
import { deliveryAttemptJson, eventJson } from './event-json.ts';
import { listDeliveriesSchema, listEventsSchema, redeliverSchema, retrieveEventSchema, type EventListQuery, type RedeliverBody } from './schemas.ts';

/** Registers /v1/events, each route a call to checkout.v1.EventService. */
export function registerEventRoutes(app: FastifyInstance, events: Client<typeof EventService>): void {
  app.get<{ Querystring: EventListQuery }>('/v1/events', { schema: listEventsSchema }, async (req) => {
    const query = req.query;
    const res = await events.listEvents({ ...page(query), type: query.type, orderId: query.order_id, reference: query.reference }, coreCall(req));
    return { object: 'list', url: '/v1/events', has_more: res.hasMore, data: res.events.map(eventJson) };
  });

  app.get<{ Params: IdParams }>('/v1/events/:id', { schema: retrieveEventSchema }, async (req) => {
    const res = await events.getEvent({ id: req.params.id }, coreCall(req));
    return eventJson(res.event!);
  });

  app.get<{ Params: IdParams }>('/v1/events/:id/deliveries', { schema: listDeliveriesSchema }, async (req) => {
    const res = await events.listDeliveryAttempts({ eventId: req.params.id }, coreCall(req));
    return { object: 'list', url: `/v1/events/${req.params.id}/deliveries`, has_more: false, data: res.attempts.map(deliveryAttemptJson) };
  });

  app.post<{ Params: IdParams; Body: RedeliverBody }>('/v1/events/:id/redeliver', { schema: redeliverSchema, preValidation: emptyBodyIsEmptyObject }, async (req) => {
    const res = await events.redeliverEvent({ eventId: req.params.id, endpointId: req.body.endpoint_id ?? '' }, coreCall(req));
    return { object: 'redelivery', event_id: req.params.id, queued: res.queued };
  });
}
