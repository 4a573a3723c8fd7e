import { createClient } from '@connectrpc/connect';
import { PaymentLinkService } from '../../../src/gen/checkout/v1/payment_link_pb.ts';
import { registerPaymentLinkRoutes } from './routes.ts';
import { PAYMENT_LINK_SCHEMAS } from './schemas.ts';
import type { RestResource } from '../shared/resource.ts';

/** The /v1 payment links resource: its routes over checkout.v1.PaymentLinkService. */
export const PAYMENT_LINKS_RESOURCE: RestResource = {
  name: 'payment-links',
  schemas: PAYMENT_LINK_SCHEMAS,
  register: (app, transport) => registerPaymentLinkRoutes(app, createClient(PaymentLinkService, transport)),
};
