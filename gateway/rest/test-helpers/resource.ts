import { createClient } from '@connectrpc/connect';
import { TestHelperService } from '../../../src/gen/checkout/v1/test_helpers_pb.ts';
import { registerTestHelperRoutes } from './routes.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 test helpers resource: its routes over checkout.v1.TestHelperService. */
export const TEST_HELPERS_RESOURCE: RestResource = {
  name: 'test-helpers',
  schemas: [],
  register: (app, transport) => registerTestHelperRoutes(app, createClient(TestHelperService, transport)),
};
