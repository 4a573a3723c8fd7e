import { createClient } from '@connectrpc/connect';
import { EventService } from '../../../src/gen/checkout/v1/webhook_pb.ts';
import { registerEventRoutes } from './routes.ts';
import { EVENT_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 events resource: its routes over checkout.v1.EventService. */
export const EVENTS_RESOURCE: RestResource = {
  name: 'events',
  schemas: EVENT_SCHEMAS,
  register: (app, transport) => registerEventRoutes(app, createClient(EventService, transport)),
};
