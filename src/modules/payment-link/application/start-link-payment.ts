import { EVENT_ID_PREFIX } from '../../event/domain/domain-event.ts';
import { createOrder } from '../../order/domain/create-order.ts';
import { ORDER_ID_PREFIX, type Order } from '../../order/domain/order.entity.ts';
import { assertLinkTakesPayment } from '../domain/link-payment-policy.ts';
import { linkOrderExpiry } from '../domain/payment-link.entity.ts';
import { velocityAddress } from '../../payment/domain/velocity.ts';
import { invalid } from '../../../kernel/domain/domain-error.ts';
import type { MerchantRepository } from '../../merchant/ports/merchant-repository.port.ts';
import type { RateLimiter } from '../../merchant/ports/rate-limiter.port.ts';
import type { OrderCreationStore } from '../../order/ports/order-creation-store.port.ts';
import type { PaymentLinkRepository } from '../ports/payment-link-repository.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { Metrics } from '../../../kernel/ports/metrics.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { linkBySuffix } from './open-payment-link.ts';

/** A token bucket's refill rate and size. */
export interface LinkStartBucket {
  /** Starts added per second. */
  readonly perSecond: number;
  /** The most starts at once after a quiet spell; 0 switches the limit off. */
  readonly burst: number;
}

/** How many orders customers may start on payment links: per client address, and per link. */
export interface LinkStartLimits {
  /** Across every link: what one address (an IPv6 /64) may start. */
  readonly perClientAddress: LinkStartBucket;
  /** What one link may start, whoever starts it: the bound when many addresses flood one link. */
  readonly perLink: LinkStartBucket;
}

/**
 * Defaults: one address starts 10 orders at once and 10 an hour after that (a customer starts one
 * per visit, a household or an office a few); one link 50 at once and one every 6 seconds (600 an
 * hour) after that. A refused start is answered with Retry-After, and the page asks the customer to
 * wait a moment.
 */
export const DEFAULT_LINK_START_LIMITS: LinkStartLimits = {
  perClientAddress: { perSecond: 10 / 3600, burst: 10 },
  perLink: { perSecond: 1 / 6, burst: 50 },
};

/** Operation under which a start's idempotency record is kept. */
export const START_LINK_PAYMENT_OPERATION = 'payment_links.start';

const START_ID = /^[\x21-\x7e]{1,100}$/;

/** A start refused by a limit: resource_exhausted / payment_link_busy, with Retry-After. */
export class LinkStartLimitedError extends ApplicationError {
  declare readonly headers: Readonly<Record<string, string>>;

  constructor(message: string, retryAfterSeconds: number) {
    super('payment_link.busy', message, undefined, { 'retry-after': String(retryAfterSeconds) });
  }
}

/** The order a customer pays a link with, and whether an earlier call with the same start id made it. */
export interface StartedLinkPayment {
  readonly order: Order;
  readonly replayed: boolean;
}

/** Creates the order a customer pays a link with (GET /l/<suffix> created none). */
export type StartLinkPayment = (suffix: string, startId: string, client: { readonly address: string | undefined }) => Promise<StartedLinkPayment>;

/**
 * Creates the use case behind the Pay buttons of a link's page: the order materialises when the
 * customer starts to pay, not when the link is opened. It carries the link's amount, reference,
 * line items and return_url, the link's id, and an expiry of an hour (or the link's, if sooner),
 * with order.created. A closed link, or a single-use link being paid through another of its orders,
 * is refused before anything is written (the reservation in pay-order.ts stays the guarantee).
 * Each start spends a token of the client address's bucket and of the link's, so that neither one
 * client nor a crowd of addresses can make a merchant's orders and webhooks grow without bound; a
 * repeated start id answers the order it created (written with it, atomically, as an idempotency
 * record), so a retried click makes no second order.
 * @throws ApplicationError payment_link.not_found, DomainError checkout.link_inactive / checkout.link_used,
 *   LinkStartLimitedError, DomainError request.parameter_invalid (start_id)
 */
export function createStartLinkPayment(deps: {
  readonly links: PaymentLinkRepository;
  readonly merchants: MerchantRepository;
  readonly store: OrderCreationStore;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly limiters: { readonly perClientAddress?: RateLimiter | undefined; readonly perLink?: RateLimiter | undefined };
  readonly metrics?: Pick<Metrics, 'rateLimitRefused'> | undefined;
}): StartLinkPayment {
  const refused = (message: string, retryAfterSeconds: number) => {
    deps.metrics?.rateLimitRefused('payment_link_start');
    return new LinkStartLimitedError(`${message} Try again in ${retryAfterSeconds} s.`, retryAfterSeconds);
  };
  return async (suffix, startId, client) => {
    if (!START_ID.test(startId)) throw invalid('request.parameter_invalid', 'start_id', 'start_id must be 1 to 100 printable ASCII characters.');
    const { link, merchant } = await linkBySuffix(deps, suffix);
    const now = deps.clock.now();
    const othersInFlight = link.type === 'single_use' && (await deps.links.hasPaymentInFlight(link.id, ''));
    assertLinkTakesPayment(link, othersInFlight, now);

    if (deps.limiters.perClientAddress && client.address) {
      const decision = await deps.limiters.perClientAddress.take(`payment_link_start:address:${velocityAddress(client.address)}`);
      if (!decision.allowed) throw refused('Too many payments were started from your network in a short time.', decision.retryAfterSeconds);
    }
    if (deps.limiters.perLink) {
      const decision = await deps.limiters.perLink.take(`payment_link_start:link:${link.id}`);
      if (!decision.allowed) throw refused('Many customers are starting to pay this link right now.', decision.retryAfterSeconds);
    }

    const { order, event } = createOrder(
      { amount: link.amount, currency: link.currency, reference: link.reference, lineItems: link.lineItems, returnUrl: link.returnUrl ?? undefined, expiresAt: linkOrderExpiry(link, now) },
      {
        orderId: deps.ids.newId(ORDER_ID_PREFIX),
        eventId: deps.ids.newId(EVENT_ID_PREFIX),
        merchantId: link.merchantId,
        livemode: link.livemode,
        checkoutHost: merchant.checkoutHost,
        checkoutToken: deps.ids.newSecret(''),
        now,
        paymentLinkId: link.id,
      },
    );
    const scope = { merchantId: link.merchantId, livemode: link.livemode };
    const key = `payment_link_start:${link.id}:${startId}`;
    const claim = await deps.store.create({ scope, key, operation: START_LINK_PAYMENT_OPERATION, fingerprint: link.id, order }, order, event);
    if (claim.claimed) return { order, replayed: false };
    const { existing } = claim;
    if (existing.operation !== START_LINK_PAYMENT_OPERATION || existing.fingerprint !== link.id) {
      throw new ApplicationError('idempotency.key_reused', 'This start_id was already used for another request; reload the page.');
    }
    return { order: existing.order, replayed: true };
  };
}
