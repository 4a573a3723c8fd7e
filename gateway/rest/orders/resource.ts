import { createClient } from '@connectrpc/connect';
import { OrderService } from '../../../src/gen/checkout/v1/order_pb.ts';
import { registerOrderRoutes } from './routes.ts';
import { ORDER_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 orders resource: its routes over checkout.v1.OrderService. */
export const ORDERS_RESOURCE: RestResource = {
  name: 'orders',
  schemas: ORDER_SCHEMAS,
  register: (app, transport) => registerOrderRoutes(app, createClient(OrderService, transport)),
};
