import { createClient } from '@connectrpc/connect';
import { WebhookEndpointService } from '../../../src/gen/checkout/v1/webhook_pb.ts';
import { registerWebhookEndpointRoutes } from './routes.ts';
import { ENDPOINT_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 webhook endpoints resource: its routes over checkout.v1.WebhookEndpointService. */
export const WEBHOOK_ENDPOINTS_RESOURCE: RestResource = {
  name: 'webhook-endpoints',
  schemas: ENDPOINT_SCHEMAS,
  register: (app, transport) => registerWebhookEndpointRoutes(app, createClient(WebhookEndpointService, transport)),
};
