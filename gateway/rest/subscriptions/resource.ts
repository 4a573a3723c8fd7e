import { createClient } from '@connectrpc/connect';
import { SubscriptionService, TestClockService } from '../../../src/gen/checkout/v1/subscription_pb.ts';
import { registerSubscriptionRoutes } from './routes.ts';
import { SUBSCRIPTION_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 subscriptions resource: its routes over checkout.v1.SubscriptionService, checkout.v1.TestClockService. */
export const SUBSCRIPTIONS_RESOURCE: RestResource = {
  name: 'subscriptions',
  schemas: SUBSCRIPTION_SCHEMAS,
  register: (app, transport) => registerSubscriptionRoutes(app, createClient(SubscriptionService, transport), createClient(TestClockService, transport)),
};
