import type { Metrics } from '../../../kernel/ports/metrics.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import { createEventIds, type EventIds } from '../../event/application/event-ids.ts';
import type { MerchantRepository } from '../../merchant/ports/merchant-repository.port.ts';
import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import { createReleaseAuthorizations, type ReleaseAuthorizations } from '../../capture/application/release-authorization.ts';
import type { VelocityLimits } from '../domain/velocity.ts';
import type { PaymentRepository } from '../ports/payment-repository.port.ts';
import type { TestCardDirectory } from '../ports/test-card-directory.port.ts';
import { createAcquirerRelease, type AcquirerRelease } from './acquirer-release.ts';
import { createAuthenticatePayment, type AuthenticatePayment } from './authenticate-payment.ts';
import type { CardSaving } from './card-saving.ts';
import { createCheckVelocity } from './card-velocity.ts';
import { createCancelChallenges } from './challenge-cancellation.ts';
import { createExpireOrder, type ExpireOrder } from './expire-order.ts';
import { createExpireOrders, type ExpireOrders } from './expire-orders.ts';
import { createGetPayment, type GetPayment } from './get-payment.ts';
import { createHeldCard } from './held-card.ts';
import { createMerchantCache, type MerchantCache } from './merchant-cache.ts';
import { createOrderExpiry, type OrderExpiry } from './order-expiry.ts';
import { createPayOrder, type PayOrder } from './pay-order.ts';
import { createPaymentFinisher } from './payment-finisher.ts';
import { createPaymentRecorder, type PaymentRecorder } from './payment-recorder.ts';
import { createReceiveTransfer, type ReceiveTransfer } from './receive-transfer.ts';
import { createRecoverPayments, type RecoverPayments } from './recover-payments.ts';
import { createReverse, type Reverse } from './reversal.ts';
import { createRouteRegistry, type RegisteredProcessors, type RouteRegistry } from './route-registry.ts';

/** What the payment module is built on: its ports, its routes and its limits. */
export interface PaymentDeps {
  readonly uow: UnitOfWork;
  /** For single reads, which take no transaction. */
  readonly reads: { readonly orders: OrderRepository; readonly payments: PaymentRepository };
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly merchants: MerchantRepository;
  readonly testCards: TestCardDirectory;
  /**
   * The processors each mode routes to, in the order of the mode's default routes (a merchant
   * without routes of its own in `payment_routes` takes them all, in that order).
   */
  readonly processors: RegisteredProcessors;
  /** Card-testing limits per client address and per merchant. */
  readonly velocity: VelocityLimits;
  /** How long a resubmission waits for the first submission to finish. */
  readonly replayWaitMs?: number;
  /**
   * A release or reversal at an acquirer that failed. A reversal stays
   * pending and the recovery sweep retries it.
   */
  readonly onBackgroundError: (err: unknown) => void;
  /** Where each attempt's outcome (by method, route and decline code) and each card-testing refusal are counted; nothing is counted without it. */
  readonly metrics?: Pick<Metrics, 'paymentAttempt' | 'rateLimitRefused'>;
  /** The checkout's "save this card", bound to its payment; without it, a request to save a card is ignored. */
  readonly cardSaving?: CardSaving;
}

/**
 * The parts of the payment path that other modules' use cases (capture, void, refund, dispute)
 * build on, with the ports they run on. Each of those use cases names, in its own deps type, the
 * few parts it uses.
 */
export interface PaymentParts {
  readonly uow: UnitOfWork;
  readonly reads: PaymentDeps['reads'];
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly onBackgroundError: (err: unknown) => void;
  readonly eventIds: EventIds;
  readonly routes: RouteRegistry;
  readonly merchants: MerchantCache;
  readonly release: AcquirerRelease;
  readonly expiry: OrderExpiry;
  readonly recorder: PaymentRecorder;
  readonly reverse: Reverse;
}

/** The payment module's use cases, and the parts other modules build on. */
export interface Payments {
  readonly parts: PaymentParts;
  readonly payOrder: PayOrder;
  readonly authenticate: AuthenticatePayment;
  readonly receiveTransfer: ReceiveTransfer;
  readonly getPayment: GetPayment;
  /** Closes an open order on request (POST /v1/orders/{id}/expire). */
  readonly expireOrder: ExpireOrder;
  /** Expires up to limit open orders past their time; answers how many it expired. */
  readonly expireDue: ExpireOrders;
  /** Settles up to limit payments left behind (abandoned, or with a reversal to retry); answers how many it took. */
  readonly recoverAttempts: RecoverPayments;
  /** Releases up to limit authorizations of manual orders not captured in time; answers how many. */
  readonly releaseAuthorizations: ReleaseAuthorizations;
}

/** Wires the payment module: each part once, each use case over the parts it names. */
export function createPayments(deps: PaymentDeps): Payments {
  const { uow, reads, ids, clock, onBackgroundError } = deps;
  const metrics = deps.metrics;
  const eventIds = createEventIds(ids, clock);
  const routes = createRouteRegistry(deps.processors);
  const merchants = createMerchantCache(deps.merchants);
  const release = createAcquirerRelease({ uow, routes, onBackgroundError });
  const heldCard = createHeldCard(deps.cardSaving);
  const cancelChallenges = createCancelChallenges({ clock, heldCard });
  const expiry = createOrderExpiry({ clock, eventIds, cancelChallenges });
  const recorder = createPaymentRecorder({ clock, eventIds });
  const reverse = createReverse({ uow, routes, clock, eventIds, recorder, onBackgroundError });
  const finisher = createPaymentFinisher({ uow, reads, clock, eventIds, merchants, recorder, heldCard, reverse, metrics });
  const submissions = { reads, merchants, replayWaitMs: deps.replayWaitMs };
  const parts: PaymentParts = { uow, reads, ids, clock, onBackgroundError, eventIds, routes, merchants, release, expiry, recorder, reverse };
  return {
    parts,
    payOrder: createPayOrder({
      ...submissions,
      uow,
      ids,
      clock,
      testCards: deps.testCards,
      routes,
      release,
      expiry,
      checkVelocity: createCheckVelocity({ velocity: deps.velocity, clock, metrics }),
      heldCard,
      cardSaving: deps.cardSaving,
      finisher,
      onBackgroundError,
      metrics,
    }),
    authenticate: createAuthenticatePayment({ ...submissions, uow, clock, routes, release, expiry, heldCard, finisher }),
    receiveTransfer: createReceiveTransfer({ ids, clock, merchants, release, expiry, cancelChallenges, recorder, metrics }),
    getPayment: createGetPayment({ payments: reads.payments }),
    expireOrder: createExpireOrder({ clock, release, expiry }),
    expireDue: createExpireOrders({ clock, release, expiry }),
    recoverAttempts: createRecoverPayments({ uow, clock, heldCard, reverse }),
    releaseAuthorizations: createReleaseAuthorizations({ clock, eventIds, release }),
  };
}
