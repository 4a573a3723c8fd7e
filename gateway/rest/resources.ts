import { REFUNDS_RESOURCE } from './refunds/resource.ts';
import { PAYOUTS_RESOURCE } from './payouts/resource.ts';
import { DISPUTES_RESOURCE } from './disputes/resource.ts';
import { CUSTOMERS_RESOURCE } from './customers/resource.ts';
import { SUBSCRIPTIONS_RESOURCE } from './subscriptions/resource.ts';
import { ORDERS_RESOURCE } from './orders/resource.ts';
import { PAYMENT_LINKS_RESOURCE } from './payment-links/resource.ts';
import { WEBHOOK_ENDPOINTS_RESOURCE } from './webhook-endpoints/resource.ts';
import { EVENTS_RESOURCE } from './events/resource.ts';
import { BALANCE_RESOURCE } from './balance/resource.ts';
import { TEST_HELPERS_RESOURCE } from './test-helpers/resource.ts';
import type { RestResource } from './shared/resource.ts';

/**
 * Every /v1 resource, once: the one list a new resource is added to (its folder holds its
 * routes, schemas and JSON shapes). Their shared schemas are added in this order, which is
 * the order of the OpenAPI document's components (and so of the SDK's generated types).
 */
export const REST_RESOURCES: readonly RestResource[] = [
  REFUNDS_RESOURCE,
  PAYOUTS_RESOURCE,
  DISPUTES_RESOURCE,
  CUSTOMERS_RESOURCE,
  SUBSCRIPTIONS_RESOURCE,
  ORDERS_RESOURCE,
  PAYMENT_LINKS_RESOURCE,
  WEBHOOK_ENDPOINTS_RESOURCE,
  EVENTS_RESOURCE,
  BALANCE_RESOURCE,
  TEST_HELPERS_RESOURCE,
];
