import { createClient } from '@connectrpc/connect';
import { CustomerService } from '../../../src/gen/checkout/v1/customer_pb.ts';
import { registerCustomerRoutes } from './routes.ts';
import { CUSTOMER_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 customers resource: its routes over checkout.v1.CustomerService. */
export const CUSTOMERS_RESOURCE: RestResource = {
  name: 'customers',
  schemas: CUSTOMER_SCHEMAS,
  register: (app, transport) => registerCustomerRoutes(app, createClient(CustomerService, transport)),
};
