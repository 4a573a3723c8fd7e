import { createClient } from '@connectrpc/connect';
import { DisputeService } from '../../../src/gen/checkout/v1/dispute_pb.ts';
import { registerDisputeRoutes } from './routes.ts';
import { DISPUTE_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 disputes resource: its routes over checkout.v1.DisputeService. */
export const DISPUTES_RESOURCE: RestResource = {
  name: 'disputes',
  schemas: DISPUTE_SCHEMAS,
  register: (app, transport) => registerDisputeRoutes(app, createClient(DisputeService, transport)),
};
