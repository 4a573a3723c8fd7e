import type { Card } from '../domain/card.ts';
import type { CaptureMethod, Order } from '../../order/domain/order.entity.ts';
import { assertPayable } from '../../order/domain/order-transitions.ts';
import { assertSubmissionAllowed, isInFlight, retriesOnAlternative } from '../domain/attempt-policy.ts';
import { ATTEMPT_ID_PREFIX, type AuthenticationResult } from '../domain/payment-attempt.entity.ts';
import {
  PAYMENT_ID_PREFIX,
  abandonChallenge,
  abandonProcessing,
  holdForReversal,
  recordAuthorization,
  requireAuthentication,
  retryOnAlternative,
  startPayment,
  type PaymentChange,
} from '../domain/payment.entity.ts';
import { assertWithinVelocity, velocityAddress, velocityScore, type AttemptTally } from '../domain/velocity.ts';
import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';
import type { AuthorizationResult, PaymentProcessor } from '../ports/payment-processor.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { attemptsOf, REVERSAL_RETRY_MS, type PaymentKit, type Release } from './payment-kit.ts';
import { outcomeOf, waitForSubmission, type PaymentOutcome } from './payment-outcome.ts';

/**
 * A vaulted card paying: its id (recorded on the attempt) and whether the customer is present. Off
 * session (merchant-initiated, no page), a card whose issuer asks for 3-D Secure declines with
 * authentication_required instead of waiting for a challenge nobody can answer.
 */
export interface SavedCardUse {
  readonly cardId: string;
  readonly offSession: boolean;
}

/** What pays: a card the customer typed or saved, or the (simulated) wallet. */
export type PaymentInstrument = { readonly method: 'card'; readonly card: Card; readonly saved?: SavedCardUse | undefined } | { readonly method: 'wallet' };

/** Who submitted a payment, as far as the gateway can tell. */
export interface PaymentClient {
  /** The customer's network address (for card-testing limits); undefined when unknown. */
  readonly address: string | undefined;
}

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

const SUBMISSION_ID = /^[\x21-\x7e]{1,100}$/;

/**
 * A merchant's submissions are serialised once fewer points than this remain
 * in its window: more than the submissions one instance's connection pool can
 * have in flight at once, at a decline's weight, could spend.
 */
export const MERCHANT_LOCK_MARGIN = 200;

/**
 * Settles a leg a crashed process left processing: if an acquirer holds
 * something for it (a processor reference), it is held for reversal (taken
 * by the sweep from reversalDueAt on); otherwise nothing reached an
 * acquirer and it simply failed.
 */
export async function settleAbandoned(kit: PaymentKit, tx: TransactionScope, stale: PaymentChange, now: Date, reversalDueAt: Date): Promise<PaymentChange> {
  // Whichever way it ends, the payment will not succeed: a card it was asked to save is dropped.
  await kit.dropHeldCard(tx, stale);
  if (stale.leg.processorRef) {
    const pending = holdForReversal(stale, stale.leg.processorRef, 'attempt_abandoned', stale.leg.authentication, new Date(reversalDueAt.getTime() - REVERSAL_RETRY_MS));
    await tx.payments.holdForReversal(pending);
    return pending;
  }
  const failed = abandonProcessing(stale, now);
  await tx.payments.recordDecline(failed);
  return failed;
}

/**
 * Creates the use case that pays an order. A submission first reserves its
 * payment under the order's row lock: it answers a repeated submission id
 * from the first, expires the order if due, refuses a paid or expired order,
 * a method the merchant has not switched on, a second payment while one is in
 * flight, an 11th submission and one beyond the card-testing limits; a
 * challenge still waiting is abandoned. Then it is routed (a soft decline on
 * the primary route retried once on the alternative), authenticated when the
 * issuer asks, captured, and recorded with the order's new state and event.
 */
export function createPayOrder(kit: PaymentKit, capture: Capture): PayOrder {
  const { deps } = kit;

  /** Refuses a submission beyond the card-testing limits of its client address or its merchant. */
  async function checkVelocity(tx: TransactionScope, order: Order, client: PaymentClient, instrument: PaymentInstrument): Promise<void> {
    const { perClientAddress, perMerchant, windowMs, declineWeight } = deps.velocity;
    if (perClientAddress <= 0 && perMerchant <= 0) return;
    // A merchant charging a card it vaulted (verified when saved), with no customer present, is not card testing.
    if (instrument.method === 'card' && instrument.saved?.offSession) return;
    const since = new Date(deps.clock.now().getTime() - windowMs);
    let clientAddress: AttemptTally | undefined;
    if (perClientAddress > 0 && client.address) {
      // Submissions of one address, serialised, each see the attempts committed before them.
      const scope = { clientAddress: velocityAddress(client.address) };
      await tx.payments.serialiseTally(scope);
      clientAddress = await tx.payments.tally(scope, since);
    }
    let merchant: AttemptTally = { attempts: 0, declines: 0 };
    if (perMerchant > 0) {
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      merchant = await tx.payments.tally(scope, since);
      if (perMerchant - velocityScore(merchant, declineWeight) <= MERCHANT_LOCK_MARGIN) {
        await tx.payments.serialiseTally(scope);
        merchant = await tx.payments.tally(scope, since);
      }
    }
    try {
      assertWithinVelocity(deps.velocity, { clientAddress, merchant });
    } catch (err) {
      deps.metrics?.rateLimitRefused('card_velocity');
      throw err;
    }
  }

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
    const order = await kit.expireIfDue(tx, locked, release);
    if (order.status === 'expired') return { expired: true as const, order };
    const now = deps.clock.now();
    assertPayable(order, now);
    const merchant = await kit.merchantIn(tx, order.merchantId);
    if (!merchant.paymentMethods.includes(command.instrument.method)) {
      throw new DomainError('checkout.method_unavailable', `Payment by ${command.instrument.method} is not switched on for this merchant.`);
    }
    for (const record of payments) {
      for (const stale of record.attempts.filter((a) => a.status === 'processing' && !isInFlight(a, now))) {
        // Left behind by a process that died mid-payment: without this the order could never be paid.
        await settleAbandoned(kit, tx, { payment: record.payment, leg: stale }, now, now);
      }
    }
    assertSubmissionAllowed(
      payments.flatMap((r) => r.attempts),
      now,
    );
    await checkVelocity(tx, order, command.client, command.instrument);
    // A new submission supersedes a challenge the customer walked away from; its authorization is released.
    for (const record of payments) {
      const waiting = record.attempts.find((a) => a.status === 'requires_authentication');
      if (!waiting) continue;
      const abandoned = abandonChallenge({ payment: record.payment, leg: waiting }, now);
      await tx.payments.recordDecline(abandoned);
      await kit.dropHeldCard(tx, abandoned);
      release(abandoned.leg);
    }
    // Last, so the link's row lock is held for as short a time as the reservation allows.
    await kit.claimLink(tx, order);
    const routes = kit.routesOf(order.livemode);
    const change = startPayment({
      paymentId: deps.ids.newId(PAYMENT_ID_PREFIX),
      attemptId: deps.ids.newId(ATTEMPT_ID_PREFIX),
      orderId: order.id,
      merchantId: order.merchantId,
      livemode: order.livemode,
      amount: order.amount,
      currency: order.currency,
      method: instrument.method,
      route: routes?.primary.route ?? 'none',
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

  async function authorize(processor: PaymentProcessor, change: PaymentChange, order: Order, instrument: PaymentInstrument): Promise<AuthorizationResult> {
    return processor.authorize({
      attemptId: change.leg.id,
      merchantId: order.merchantId,
      livemode: order.livemode,
      amount: change.payment.amount,
      currency: change.payment.currency,
      card: instrument.method === 'card' ? instrument.card : undefined,
    });
  }

  return async (command) => {
    if (!SUBMISSION_ID.test(command.submissionId)) {
      throw new DomainError('request.parameter_invalid', 'submission_id must be 1 to 100 printable ASCII characters.', 'submission_id');
    }
    const reserved = await kit.inTransaction((tx, release) => reserve(tx, release, command));
    if ('replay' in reserved) return waitForSubmission(kit, reserved.order.id, command.submissionId);
    if ('expired' in reserved) throw new DomainError('checkout.expired', 'This checkout has expired.');
    const { order, routes } = reserved;
    let change: PaymentChange = reserved.change;
    const { instrument } = command;

    // Live mode: test cards never reach an acquirer, and without live routes nothing does.
    if (order.livemode && instrument.method === 'card' && (await deps.testCards.isTestCard(instrument.card.number))) {
      return outcomeOf(await kit.finishFailure(change, 'test_card_in_live_mode', 'not_required'), { leg: { ...change.leg, status: 'failed', declineCode: 'test_card_in_live_mode' } });
    }
    if (!routes) return outcomeOf(await kit.finishFailure(change, 'processing_unavailable', 'not_required'), { leg: { ...change.leg, status: 'failed', declineCode: 'processing_unavailable' } });

    let processor = routes.primary;
    let answer = await authorize(processor, change, order, instrument);
    if (answer.kind === 'declined' && retriesOnAlternative(answer.declineCode, change.leg)) {
      const retry = retryOnAlternative(change, answer.declineCode, { attemptId: deps.ids.newId(ATTEMPT_ID_PREFIX), route: routes.alternative.route, now: deps.clock.now() });
      await deps.uow.run((tx) => tx.payments.retryOnAlternative(retry));
      kit.counted(change, 'declined', answer.declineCode);
      change = retry;
      processor = routes.alternative;
      answer = await authorize(processor, change, order, instrument);
    }
    switch (answer.kind) {
      case 'approved':
        return capture(change, processor, answer.processorRef, 'not_required', order.captureMethod);
      case 'authentication_required': {
        if (instrument.method === 'card' && instrument.saved?.offSession) {
          // Nobody is there to answer a challenge: the authorization is released and the charge declines.
          await processor.void(answer.processorRef).catch((err: unknown) => deps.onBackgroundError(err));
          const settled = await kit.finishFailure(change, 'authentication_required', 'required');
          return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: 'authentication_required' } });
        }
        const waiting = requireAuthentication(change, answer.processorRef, answer.testCode ?? null, deps.clock.now());
        const attempts = await deps.uow.run(async (tx) => {
          await tx.payments.recordChallenge(waiting);
          return attemptsOf(tx.payments, order.id);
        });
        return outcomeOf({ order, attempts, merchant: await kit.merchantOf(order.merchantId) }, waiting);
      }
      case 'declined': {
        const settled = await kit.finishFailure(change, answer.declineCode, 'not_required');
        return outcomeOf(settled, { leg: { ...change.leg, status: 'failed', declineCode: answer.declineCode } });
      }
    }
  };
}

/** The end of an approved card or wallet payment (see createCapture). */
export type Capture = (change: PaymentChange, processor: PaymentProcessor, processorRef: string, authentication: AuthenticationResult, captureMethod: CaptureMethod) => Promise<PaymentOutcome>;

/**
 * The end every card and wallet payment shares: keep the authorization's
 * reference (so a crash after the capture leaves something to reverse),
 * capture the full amount, then record it (or reverse it when the order can no
 * longer take it), or record the decline. A manual order's authorization is
 * recorded instead, and captured later by the merchant (capture-order.ts).
 */
export function createCapture(kit: PaymentKit): Capture {
  return async (change, processor, processorRef, authentication, captureMethod) => {
    const authorized = recordAuthorization(change, processorRef, kit.deps.clock.now());
    // One statement: it needs no transaction around it.
    await kit.deps.uow.runAlone((tx) => tx.payments.recordAuthorization(authorized));
    if (captureMethod === 'manual') {
      const settled = await kit.finishAuthorization(authorized, authentication);
      return outcomeOf(settled, { leg: { ...authorized.leg, status: settled.reversed ? 'reversal_pending' : 'authorized' } });
    }
    const captured = await processor.capture(processorRef, authorized.payment.amount);
    if (captured.kind === 'declined') {
      const settled = await kit.finishFailure(authorized, captured.declineCode, authentication);
      return outcomeOf(settled, { leg: { ...authorized.leg, status: 'failed', declineCode: captured.declineCode } });
    }
    const settled = await kit.finishSuccess(authorized, captured.processorRef, authentication);
    return outcomeOf(settled, { leg: { ...authorized.leg, status: settled.reversed ? 'reversal_pending' : 'succeeded' } });
  };
}
