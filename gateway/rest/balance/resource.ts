import { createClient } from '@connectrpc/connect';
import { BalanceService } from '../../../src/gen/checkout/v1/balance_pb.ts';
import { registerBalanceRoutes } from './routes.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 balance resource: its routes over checkout.v1.BalanceService. */
export const BALANCE_RESOURCE: RestResource = {
  name: 'balance',
  schemas: [],
  register: (app, transport) => registerBalanceRoutes(app, createClient(BalanceService, transport)),
};
