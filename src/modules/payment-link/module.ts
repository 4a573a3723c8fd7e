import { PostgresPaymentLinkRepository } from './adapters/postgres/postgres-payment-link-repository.ts';
import { PAYMENT_LINK_ERRORS } from './errors.ts';
import type { PaymentLinkScope } from './ports/payment-link-scope.port.ts';
import type { ModuleManifest } from '../../kernel/module-manifest.ts';
import { PostgresRateLimiter } from '../merchant/adapters/postgres/postgres-rate-limiter.ts';
import { createCreatePaymentLink } from './application/create-payment-link.ts';
import { createDeactivatePaymentLink } from './application/deactivate-payment-link.ts';
import { createOpenPaymentLink } from './application/open-payment-link.ts';
import { createStartLinkPayment, DEFAULT_LINK_START_LIMITS, type LinkStartBucket, type LinkStartLimits } from './application/start-link-payment.ts';
import { createPaymentLinkService } from './application/payment-link-service.ts';
import { createPaymentLinkPageService } from './application/payment-link-page-service.ts';
import type { OrderCreationStore } from '../order/ports/order-creation-store.port.ts';
import type { MerchantRepository } from '../merchant/ports/merchant-repository.port.ts';
import { EVENT_ID_PREFIX } from '../event/domain/domain-event.ts';
import { PaymentLinkPageService, PaymentLinkService } from '../../gen/checkout/v1/payment_link_pb.ts';
import { connectService, type ModuleContext, type ModuleWiring } from '../../kernel/module-manifest.ts';
import { PAYMENT_LINK_ID_PREFIX } from './domain/payment-link.entity.ts';

/** The payment link module's parts for the composition root: its repositories in a transaction, its error codes' mappings. */
export const PAYMENT_LINK_MODULE = {
  name: 'payment-link',
  postgresObjectTables: [[PAYMENT_LINK_ID_PREFIX, 'payment_links']],
  postgresScope: (db): PaymentLinkScope => ({ links: new PostgresPaymentLinkRepository(db) }),
  errors: PAYMENT_LINK_ERRORS,
} satisfies ModuleManifest;

/** Wires the payment link module: the merchant's PaymentLinkService, and the customers' PaymentLinkPageService under start limits. */
export function wirePaymentLink(
  context: ModuleContext,
  deps: {
    readonly orderCreation: OrderCreationStore;
    readonly merchants: MerchantRepository;
    /** How many orders customers may start on payment links, per client address and per link (DEFAULT_LINK_START_LIMITS when absent). */
    readonly linkStarts?: LinkStartLimits;
  },
): ModuleWiring {
  const { knex, ids, clock } = context;
  const links = new PostgresPaymentLinkRepository(knex);
  const linkStarts = deps.linkStarts ?? DEFAULT_LINK_START_LIMITS;
  /** A bucket shared by every instance, or none when the limit is switched off (a burst or rate of 0). */
  const bucket = (policy: LinkStartBucket) => (policy.burst > 0 && policy.perSecond > 0 ? new PostgresRateLimiter(knex, policy) : undefined);
  const service = createPaymentLinkService({
    authenticate: context.authenticate,
    idempotent: context.idempotent,
    links,
    createLink: createCreatePaymentLink({ ids, clock }),
    deactivateLink: createDeactivatePaymentLink({ eventIds: () => ({ eventId: ids.newId(EVENT_ID_PREFIX), now: clock.now() }) }),
    clock,
  });
  const pageService = createPaymentLinkPageService({
    open: createOpenPaymentLink({ links, merchants: deps.merchants, clock }),
    start: createStartLinkPayment({
      links,
      merchants: deps.merchants,
      store: deps.orderCreation,
      ids,
      clock,
      limiters: { perClientAddress: bucket(linkStarts.perClientAddress), perLink: bucket(linkStarts.perLink) },
      metrics: context.metrics,
    }),
  });
  return {
    services: [
      connectService(PaymentLinkService, service, 'secret'),
      // No key: the link's suffix is the credential, as the checkout id is for CheckoutService.
      connectService(PaymentLinkPageService, pageService, 'none'),
    ],
  };
}
