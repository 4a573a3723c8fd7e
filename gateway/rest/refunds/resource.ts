import { createClient } from '@connectrpc/connect';
import { RefundService } from '../../../src/gen/checkout/v1/refund_pb.ts';
import { registerRefundRoutes } from './routes.ts';
import { REFUND_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 refunds resource: its routes over checkout.v1.RefundService. */
export const REFUNDS_RESOURCE: RestResource = {
  name: 'refunds',
  schemas: REFUND_SCHEMAS,
  register: (app, transport) => registerRefundRoutes(app, createClient(RefundService, transport)),
};
