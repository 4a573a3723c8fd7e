import type { CaptureMethod, Order } from '../../order/domain/order.entity.ts';
import { assertPayable } from '../../order/domain/order-transitions.ts';
import { assertSubmissionAllowed, isInFlight } from '../domain/attempt-policy.ts';
import { nextRoute } from '../domain/routing.ts';
import { ATTEMPT_ID_PREFIX, type AuthenticationResult } from '../domain/payment-attempt.entity.ts';
import { PAYMENT_ID_PREFIX, abandonChallenge, recordAuthorization, requireAuthentication, retryOnAlternative, startPayment, type PaymentChange } from '../domain/payment.entity.ts';
import { velocityAddress } from '../domain/velocity.ts';
import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';
import type { AuthorizationOutcome, PaymentProcessor } from '../ports/payment-processor.port.ts';
import type { TestCardDirectory } from '../ports/test-card-directory.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { TransactionScope, UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { claimLink } from '../../payment-link/application/link-claim.ts';
import { settleAbandoned } from './abandoned-payment.ts';
import type { AcquirerRelease, Release } from './acquirer-release.ts';
import { countAttempt, type AttemptMetrics } from './attempt-metrics.ts';
import { attemptsOf } from './attempts-of.ts';
import type { CardSaving } from './card-saving.ts';
import type { CheckVelocity } from './card-velocity.ts';
import type { HeldCard } from './held-card.ts';
import type { MerchantCache } from './merchant-cache.ts';
import type { OrderExpiry } from './order-expiry.ts';
import type { PaymentFinisher } from './payment-finisher.ts';
import { FIELDS_ORIGIN_PARAM, type PaymentClient, type PaymentInstrument } from './payment-instrument.ts';
import { outcomeOf, waitForSubmission, type PaymentOutcome, type SubmissionReads } from './payment-outcome.ts';
import type { RouteRegistry } from './route-registry.ts';

/** What one payment of an order is asked to do. */
export interface PayOrderCommand {
  readonly orderId: string;
  /**
   * Checks, under the order's lock, that the caller may pay this order (the
   * checkout page's token; a merchant's scope for a server-side charge).
   * @throws what the caller's refusal is.
   */
  readonly authorize: (order: Order) => void;
  /** The caller's id for this submission: a repeat answers the first one's outcome and charges nothing more. */
  readonly submissionId: string;
  readonly instrument: PaymentInstrument;
  readonly client: PaymentClient;
  /**
   * The checkout's "save this card" (a typed card only): the card is held for this submission's
   * payment and vaulted for the order's customer if, and only if, that payment succeeds.
   */
  readonly saveCard?: boolean;
}

/** Pays an order with an instrument, through the routes of its mode. */
export type PayOrder = (command: PayOrderCommand) => Promise<PaymentOutcome>;

/** The end of an approved payment: where its authorization is recorded, and its capture. */
export interface CaptureApprovedDeps {
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly finisher: PaymentFinisher;
}

/** What paying an order runs on: each stage's part, named. */
export interface PayOrderDeps extends CaptureApprovedDeps, SubmissionReads {
  readonly ids: IdGenerator;
  readonly testCards: TestCardDirectory;
  readonly routes: Pick<RouteRegistry, 'routesIn'>;
  readonly merchants: MerchantCache;
  readonly release: Pick<AcquirerRelease, 'inTransaction'>;
  readonly expiry: Pick<OrderExpiry, 'expireIfDue'>;
  readonly checkVelocity: CheckVelocity;
  readonly heldCard: HeldCard;
  /** The checkout's "save this card", bound to its payment; without it, a request to save a card is ignored. */
  readonly cardSaving: CardSaving | undefined;
  /** An off-session challenge's authorization whose release failed. */
  readonly onBackgroundError: (err: unknown) => void;
  readonly metrics: AttemptMetrics;
}

const SUBMISSION_ID = /^[\x21-\x7e]{1,100}$/;

/**
 * Creates the use case that pays an order, in stages that read top to bottom:
 * 1. reserve: under the order's row lock, a repeated submission id answers the
 *    first one's outcome; the order is expired if due; a paid or expired order,
 *    a method the merchant has not switched on, a second payment while one is in
 *    flight, an 11th submission and one beyond the card-testing limits are
 *    refused; a challenge still waiting is abandoned; the payment is started;
 * 2. authorize on the merchant's routes for the order's mode, in order: an
 *    answer the failover rule moves on (a soft decline) goes to the next route
 *    while one is left (domain/routing.ts);
 * 3. the answer: a challenge waits for the customer (authenticate-payment.ts),
 *    a decline is recorded, an approval is captured and recorded
 *    ({@link captureApproved}) with the order's new state and event.
 */
export function createPayOrder(deps: PayOrderDeps): PayOrder {
  return async (command) => {
    if (!SUBMISSION_ID.test(command.submissionId)) {
      throw new DomainError('request.parameter_invalid', 'submission_id must be 1 to 100 printable ASCII characters.', 'submission_id');
    }
    // 1. Reserve.
    const reserved = await deps.release.inTransaction((tx, release) => reserve(tx, release, command));
    if ('replay' in reserved) return waitForSubmission(deps, reserved.order.id, command.submissionId);
    if ('expired' in reserved) throw new DomainError('checkout.expired', 'This checkout has expired.');
    const { order, routes } = reserved;
    let change: PaymentChange = reserved.change;
    const { instrument } = command;

    // Live mode: test cards never reach an acquirer, and without live routes nothing does.
    if (order.livemode && instrument.method === 'card' && (await deps.testCards.isTestCard(instrument.card.number))) {
      return outcomeOf(await deps.finisher.finishFailure(change, 'test_card_in_live_mode', 'not_required'), { leg: { ...change.leg, status: 'failed', declineCode: 'test_card_in_live_mode' } });
    }
    if (routes.length === 0) return outcomeOf(await deps.finisher.finishFailure(change, 'processing_unavailable', 'not_required'), { leg: { ...change.leg, status: 'failed', declineCode: 'processing_unavailable' } });

    // 2. Authorize on the routes, each attempt recording its route.
    let position = 0;
    let processor = routes[position]!;
    let answer = await authorize(processor, change, order, instrument, command.client);
    for (;;) {
      const next = nextRoute(routes.length, position, answer);
      // Only a decline moves on today (the kind check tells the compiler so).
      if (next === undefined || answer.kind !== 'declined') break;
      const retry = retryOnAlternative(change, answer.declineCode, { attemptId: deps.ids.newId(ATTEMPT_ID_PREFIX), route: routes[next]!.route, now: deps.clock.now() });
      await deps.uow.run((tx) => tx.payments.retryOnAlternative(retry));
      countAttempt(deps.metrics, change, 'declined', answer.declineCode);
      change = retry;
      position = next;
      processor = routes[position]!;
      answer = await authorize(processor, change, order, instrument, command.client);
    }

    // 3. The answer.
    switch (answer.kind) {
      case 'approved':
        return captureApproved(deps, change, processor, answer.processorRef, 'not_required', order.captureMethod);
      case 'action': {
        if (instrument.method === 'card' && instrument.saved?.offSession) {
          // Nobody is there to follow the redirect: the authorization is released and the charge declines.
          await processor.void(answer.processorRef, `${change.leg.id}/void`).catch((err: unknown) => deps.onBackgroundError(err));
          const settled = await deps.finisher.finishFailure(change, 'authentication_required', 'required');
          return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: 'authentication_required' } });
        }
        const waiting = requireAuthentication(change, answer.processorRef, answer.redirect, answer.testCode ?? null, deps.clock.now());
        const attempts = await deps.uow.run(async (tx) => {
          await tx.payments.recordChallenge(waiting);
          return attemptsOf(tx.payments, order.id);
        });
        return outcomeOf({ order, attempts, merchant: await deps.merchants.merchantOf(order.merchantId) }, waiting);
      }
      case 'pending':
        return holdPending(deps, change, answer.processorRef);
      case 'declined': {
        const settled = await deps.finisher.finishFailure(change, answer.declineCode, 'not_required');
        return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: answer.declineCode } });
      }
      default: {
        const unknown: never = answer;
        throw new Error(`unknown authorization outcome ${JSON.stringify(unknown)}`);
      }
    }
  };

  /** Stage 1: the payment reserved under the order's lock, or why it is not. */
  async function reserve(tx: TransactionScope, release: Release, command: PayOrderCommand) {
    const locked = await tx.orders.lock(command.orderId);
    if (!locked) throw new ApplicationError('checkout.not_found', 'No such checkout.');
    command.authorize(locked);
    const { instrument } = command;
    const saveCard = command.saveCard === true && instrument.method === 'card' && !instrument.saved && deps.cardSaving !== undefined;
    if (saveCard && !locked.customerId) throw invalid('request.parameter_invalid', 'save_card', 'This checkout names no customer to save the card for.');
    // Read once: the repeat check, the abandoned attempts and the submission rules below all use it.
    const payments = await tx.payments.listForOrder(locked.id);
    if (payments.some((r) => r.payment.submissionId === command.submissionId)) return { replay: true as const, order: locked };
    const order = await deps.expiry.expireIfDue(tx, locked, release);
    if (order.status === 'expired') return { expired: true as const, order };
    const now = deps.clock.now();
    assertPayable(order, now);
    const merchant = await deps.merchants.merchantIn(tx, order.merchantId);
    if (!merchant.paymentMethods.includes(command.instrument.method)) {
      throw new DomainError('checkout.method_unavailable', `Payment by ${command.instrument.method} is not switched on for this merchant.`);
    }
    for (const record of payments) {
      for (const stale of record.attempts.filter((a) => a.status === 'processing' && !isInFlight(a, now))) {
        // Left behind by a process that died mid-payment: without this the order could never be paid.
        await settleAbandoned(deps.heldCard, tx, { payment: record.payment, leg: stale }, now, now);
      }
    }
    assertSubmissionAllowed(
      payments.flatMap((r) => r.attempts),
      now,
    );
    await deps.checkVelocity(tx, order, command.client, command.instrument);
    // A new submission supersedes a challenge the customer walked away from; its authorization is released.
    for (const record of payments) {
      const waiting = record.attempts.find((a) => a.status === 'requires_authentication');
      if (!waiting) continue;
      const abandoned = abandonChallenge({ payment: record.payment, leg: waiting }, now);
      await tx.payments.recordDecline(abandoned);
      await deps.heldCard.drop(tx, abandoned);
      release(abandoned.leg);
    }
    // Last, so the link's row lock is held for as short a time as the reservation allows.
    await claimLink(tx, order, deps.clock.now());
    const routes = await deps.routes.routesIn(tx, order.merchantId, order.livemode);
    const change = startPayment({
      paymentId: deps.ids.newId(PAYMENT_ID_PREFIX),
      attemptId: deps.ids.newId(ATTEMPT_ID_PREFIX),
      orderId: order.id,
      merchantId: order.merchantId,
      livemode: order.livemode,
      amount: order.amount,
      currency: order.currency,
      method: instrument.method,
      route: routes[0]?.route ?? 'none',
      submissionId: command.submissionId,
      clientAddress: command.client.address ? velocityAddress(command.client.address) : null,
      card: instrument.method === 'card' ? { brand: instrument.card.brand, last4: instrument.card.last4, savedCardId: instrument.saved?.cardId } : undefined,
      now,
    });
    await tx.payments.start(change);
    // Bound to this payment, in the transaction that starts it: a refused submission holds nothing.
    if (saveCard && instrument.method === 'card') await deps.cardSaving!.hold(tx, order, change.payment.id, instrument.card);
    return { change, order, routes };
  }

  /** Stage 2: one route's answer. */
  async function authorize(processor: PaymentProcessor, change: PaymentChange, order: Order, instrument: PaymentInstrument, client: PaymentClient): Promise<AuthorizationOutcome> {
    const offSession = instrument.method === 'card' && instrument.saved?.offSession === true;
    return processor.authorize({
      attemptId: change.leg.id,
      merchantId: order.merchantId,
      livemode: order.livemode,
      amount: change.payment.amount,
      currency: change.payment.currency,
      card: instrument.method === 'card' ? instrument.card : undefined,
      // The return leg of a redirect (3-D Secure); nobody follows one off session.
      returnUrl: offSession ? undefined : returnUrlOf(order, change.leg.id, client.fieldsOrigin),
      reference: change.leg.id,
    });
  }
}

/**
 * The return leg of a redirect for an attempt of this order: `/c/<checkout>/return/<attempt>` on the
 * order's checkout host; for a payment of the embedded fields, with `?fields_origin=<merchant origin>`,
 * which the processor's redirect keeps (the simulator signs it into its issuer link).
 */
export function returnUrlOf(order: Pick<Order, 'checkoutUrl'>, attemptId: string, fieldsOrigin?: string): string {
  const leg = `${order.checkoutUrl}/return/${encodeURIComponent(attemptId)}`;
  return fieldsOrigin ? `${leg}?${FIELDS_ORIGIN_PARAM}=${encodeURIComponent(fieldsOrigin)}` : leg;
}

/**
 * A processor that has not decided (pending): the attempt keeps its reference and stays processing,
 * so nothing counts it as paid or declined. Only an explicit answer moves it; without one within
 * STALE_PROCESSING_MS, the recovery sweep reverses whatever the processor holds (pending is never
 * taken for success). The caller learns the payment is still in progress.
 * @throws DomainError checkout.payment_in_progress
 */
export async function holdPending(deps: Pick<CaptureApprovedDeps, 'uow' | 'clock'>, change: PaymentChange, processorRef: string): Promise<never> {
  await deps.uow.runAlone((tx) => tx.payments.recordAuthorization(recordAuthorization(change, processorRef, deps.clock.now())));
  throw new DomainError('checkout.payment_in_progress', 'This payment is still being processed; refresh the page in a moment.');
}

/**
 * The end every approved card and wallet payment shares (a challenge answered in
 * authenticate-payment.ts ends here too): keep the authorization's reference (so
 * a crash after the capture leaves something to reverse), capture the full
 * amount, then record it (or reverse it when the order can no longer take it),
 * or record the decline. A manual order's authorization is recorded instead,
 * and captured later by the merchant (capture-order.ts).
 */
export async function captureApproved(
  deps: CaptureApprovedDeps,
  change: PaymentChange,
  processor: PaymentProcessor,
  processorRef: string,
  authentication: AuthenticationResult,
  captureMethod: CaptureMethod,
): Promise<PaymentOutcome> {
  const authorized = recordAuthorization(change, processorRef, deps.clock.now());
  // One statement: it needs no transaction around it.
  await deps.uow.runAlone((tx) => tx.payments.recordAuthorization(authorized));
  if (captureMethod === 'manual') {
    const settled = await deps.finisher.finishAuthorization(authorized, authentication);
    return outcomeOf(settled, { leg: { ...authorized.leg, status: settled.reversed ? 'reversal_pending' : 'authorized' } });
  }
  const captured = await processor.capture(processorRef, authorized.payment.amount, `${authorized.leg.id}/capture`);
  if (captured.kind === 'pending') return holdPending(deps, authorized, processorRef);
  if (captured.kind === 'failed') {
    const settled = await deps.finisher.finishFailure(authorized, captured.declineCode, authentication);
    return outcomeOf(settled, { leg: { ...authorized.leg, status: 'failed', declineCode: captured.declineCode } });
  }
  const settled = await deps.finisher.finishSuccess(authorized, captured.processorRef, authentication);
  return outcomeOf(settled, { leg: { ...authorized.leg, status: settled.reversed ? 'reversal_pending' : 'succeeded' } });
}
