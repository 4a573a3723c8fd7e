import { createClient } from '@connectrpc/connect';
import { PayoutService } from '../../../src/gen/checkout/v1/payout_pb.ts';
import { registerPayoutRoutes } from './routes.ts';
import { PAYOUT_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 payouts resource: its routes over checkout.v1.PayoutService. */
export const PAYOUTS_RESOURCE: RestResource = {
  name: 'payouts',
  schemas: PAYOUT_SCHEMAS,
  register: (app, transport) => registerPayoutRoutes(app, createClient(PayoutService, transport)),
};
