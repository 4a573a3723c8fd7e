import { ApplicationError } from '../application-error.ts';
import { timingSafeEqual } from 'node:crypto';
import type { Card } from '../../domain/payment/card.ts';
import { DECLINES, type DeclineCode } from '../../domain/payment/decline-code.ts';
import {
  ATTEMPT_ID_PREFIX,
  MAX_ATTEMPTS_PER_ORDER,
  STALE_PROCESSING_MS,
  isInFlight,
  type AuthenticationResult,
  type CancellationReason,
  type PaymentAttempt,
  type PaymentMethod,
} from '../../domain/payment/payment-attempt.entity.ts';
import { computeSettlement } from '../../domain/payment/settlement.ts';
import { assertWithinVelocity, velocityAddress, velocityScore, type AttemptTally, type VelocityLimits } from '../../domain/payment/velocity.ts';
import { assertPayable, isDueToExpire, markExpired, markFailed, markPaid, noteReversal } from '../../domain/order/order-transitions.ts';
import { orderIdOfCheckout, type Order } from '../../domain/order/order.entity.ts';
import { EVENT_ID_PREFIX } from '../../domain/event/domain-event.ts';
import { DomainError } from '../../domain/shared/domain-error.ts';
import type { Clock } from '../../ports/clock.port.ts';
import type { IdGenerator } from '../../ports/id-generator.port.ts';
import type { MerchantRecord, MerchantRepository } from '../../ports/merchant-repository.port.ts';
import type { AuthorizationResult, PaymentProcessor, SettleResult } from '../../ports/payment-processor.port.ts';
import type { TestCardDirectory } from '../../ports/test-card-directory.port.ts';
import type { TransactionScope, UnitOfWork } from '../../ports/unit-of-work.port.ts';
import { checkoutView, type CheckoutView } from './checkout-view.ts';

/** How a customer pays in one submission. */
export type PaymentInstrument = { readonly method: 'card'; readonly card: Card } | { readonly method: 'wallet' };

/** Who submitted a payment, as far as the gateway can tell. */
export interface PaymentClient {
  /** The customer's network address (for card-testing limits); undefined when unknown. */
  readonly address: string | undefined;
}

/** Where a payment left the order. */
export interface PaymentResult {
  readonly status: 'succeeded' | 'requires_authentication' | 'failed';
  readonly view: CheckoutView;
  readonly challenge: { attemptId: string; testCode: string | undefined } | undefined;
  readonly declineCode: DeclineCode | undefined;
}

/** Acquirer routes: attempts go to primary; a soft decline is retried once on alternative. */
export interface Routes {
  readonly primary: PaymentProcessor;
  readonly alternative: PaymentProcessor;
}

/** What the engine runs on. */
export interface PaymentEngineDeps {
  readonly uow: UnitOfWork;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly merchants: MerchantRepository;
  readonly testCards: TestCardDirectory;
  /** Routes for test mode (simulated acquirers). */
  readonly testRoutes: Routes;
  /** Routes for live mode; undefined until a live acquirer is configured. */
  readonly liveRoutes: Routes | undefined;
  /** Card-testing limits per client address and per merchant. */
  readonly velocity: VelocityLimits;
  /** How long a resubmission waits for the first submission to finish. */
  readonly replayWaitMs?: number;
  /**
   * A release or reversal at an acquirer that failed. A reversal stays
   * pending and {@link PaymentEngine.recoverAttempts} retries it.
   */
  readonly onBackgroundError: (err: unknown) => void;
}

/** The payment engine: reserve an attempt, route it, record the outcome. */
export interface PaymentEngine {
  /** Loads the checkout (expiring it first if its time has come). */
  view(checkoutId: string): Promise<CheckoutView>;
  /** Pays with a card or the wallet; idempotent per submission id. */
  pay(checkoutId: string, token: string, submissionId: string, instrument: PaymentInstrument, client: PaymentClient): Promise<PaymentResult>;
  /** Completes or abandons a pending 3-D Secure challenge. */
  authenticate(checkoutId: string, token: string, attemptId: string, answer: { code: string } | { abandon: true }): Promise<PaymentResult>;
  /** Marks a test-mode bank transfer arrived for an order of the caller; an open challenge is canceled. */
  receiveTransfer(order: Order): Promise<Order>;
  /** Expires up to limit open orders past their time; answers how many it expired. */
  expireDue(limit: number): Promise<number>;
  /**
   * Settles up to limit attempts that a crashed or stalled process left
   * behind: one still processing after {@link STALE_PROCESSING_MS} fails if
   * nothing reached an acquirer and is reversed if something did; a reversal
   * that failed earlier is tried again. Answers how many it took.
   */
  recoverAttempts(limit: number): Promise<number>;
}

const SUBMISSION_ID = /^[\x21-\x7e]{1,100}$/;

/**
 * A merchant's submissions are serialised once fewer points than this remain
 * in its window: more than the submissions one instance's connection pool can
 * have in flight at once, at a decline's weight, could spend.
 */
export const MERCHANT_LOCK_MARGIN = 200;

/** A reversal the engine itself just left pending is retried by the sweep only after this long. */
export const REVERSAL_RETRY_MS = 30_000;

function tokenMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** True while the order can still take a payment (expired and paid orders cannot). */
function takesPayment(order: Order): boolean {
  return order.status === 'pending' || order.status === 'failed';
}

/** Why an order can no longer take the payment an attempt was making. */
function reasonOrderRefuses(order: Order): CancellationReason {
  return order.status === 'paid' ? 'order_paid' : 'order_expired';
}

/** Authorizations released inside a transaction, voided at their acquirer once it commits. */
type Release = (attempt: PaymentAttempt) => void;

/**
 * Creates the payment engine. Safe under concurrency: a submission first
 * reserves an attempt under the order's row lock (refusing while another is
 * processing), a resubmitted form finds its first attempt by submission id,
 * and the database admits one succeeded attempt per order. Whatever can end
 * a payment from outside (a transfer, expiry) cancels an open challenge
 * under the same lock, and a capture that still cannot be recorded is
 * reversed at the acquirer and reported with order.payment_reversed.
 */
export function createPaymentEngine(deps: PaymentEngineDeps): PaymentEngine {
  const eventIds = () => ({ eventId: deps.ids.newId(EVENT_ID_PREFIX), now: deps.clock.now() });
  const processors = new Map<string, PaymentProcessor>();
  for (const routes of [deps.testRoutes, deps.liveRoutes]) {
    if (routes) for (const p of [routes.primary, routes.alternative]) processors.set(p.route, p);
  }

  // Merchants change rarely; a short cache spares a query per payment step. Never call this
  // inside uow.run: it takes a second pool connection while the transaction holds one, and
  // enough concurrent payments would then wait on each other until the pool times out.
  const merchantCache = new Map<string, { merchant: MerchantRecord; until: number }>();
  async function merchantOf(order: Pick<Order, 'id' | 'merchantId'>): Promise<MerchantRecord> {
    const hit = merchantCache.get(order.merchantId);
    if (hit && hit.until > Date.now()) return hit.merchant;
    const merchant = await deps.merchants.findById(order.merchantId);
    if (!merchant) throw new Error(`merchant ${order.merchantId} of ${order.id} not found`);
    if (merchantCache.size > 10_000) merchantCache.clear();
    merchantCache.set(order.merchantId, { merchant, until: Date.now() + 30_000 });
    return merchant;
  }

  /** The merchant of an order, read before any transaction is opened. */
  async function merchantOfOrder(orderId: string): Promise<MerchantRecord> {
    const order = await deps.uow.run((tx) => tx.orders.findForCheckout(orderId));
    if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
    return merchantOf(order);
  }

  /** Releases authorizations at their acquirers; a failure only leaves a hold that lapses by itself. */
  async function voidAll(attempts: readonly PaymentAttempt[]): Promise<void> {
    await Promise.all(
      attempts.map(async (attempt) => {
        const processor = processors.get(attempt.route);
        if (!processor || !attempt.processorRef) return;
        try {
          const released = await processor.void(attempt.processorRef);
          if (released.kind === 'declined') throw new Error(`void of ${attempt.id} on ${attempt.route} declined: ${released.declineCode}`);
        } catch (err) {
          deps.onBackgroundError(err);
        }
      }),
    );
  }

  /** Runs work in one transaction; the authorizations it released are voided after the commit. */
  async function inTransaction<T>(work: (tx: TransactionScope, release: Release) => Promise<T>): Promise<T> {
    const released: PaymentAttempt[] = [];
    const result = await deps.uow.run((tx) => work(tx, (attempt) => released.push(attempt)));
    if (released.length > 0) await voidAll(released);
    return result;
  }

  async function lockCheckout(tx: TransactionScope, checkoutId: string, token: string): Promise<Order> {
    const order = await tx.orders.lock(orderIdOfCheckout(checkoutId));
    if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
    if (!tokenMatches(order.checkoutToken, token)) {
      throw new ApplicationError('checkout.token_invalid', 'The checkout token is missing or wrong; reload the checkout page.');
    }
    return order;
  }

  /** Cancels the order's open challenges in this transaction; their authorizations are released after it. */
  async function cancelChallenges(tx: TransactionScope, attempts: readonly PaymentAttempt[], reason: CancellationReason, release: Release): Promise<void> {
    const now = deps.clock.now();
    for (const waiting of attempts.filter((a) => a.status === 'requires_authentication')) {
      const canceled: PaymentAttempt = { ...waiting, status: 'canceled', cancellationReason: reason, updatedAt: now };
      await tx.attempts.recordOutcome(canceled);
      release(canceled);
    }
  }

  /**
   * Expires the order in this transaction if its time has come, canceling any
   * open challenge. A payment already in flight decides instead: the customer
   * submitted in time, and its outcome settles the order.
   */
  async function expireIfDue(tx: TransactionScope, order: Order, release: Release): Promise<Order> {
    if (!isDueToExpire(order, deps.clock.now())) return order;
    const attempts = await tx.attempts.listForOrder(order.id);
    if (attempts.some((a) => isInFlight(a, deps.clock.now()))) return order;
    const t = markExpired(order, eventIds());
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    await cancelChallenges(tx, attempts, 'order_expired', release);
    return t.order;
  }

  /**
   * Settles an attempt that a crashed process left processing: if an acquirer
   * holds something for it (a processor reference), it is queued for reversal
   * (taken by the sweep from reversalDueAt on); otherwise nothing reached an
   * acquirer and it simply failed.
   */
  async function settleAbandoned(tx: TransactionScope, stale: PaymentAttempt, now: Date, reversalDueAt: Date): Promise<PaymentAttempt> {
    const settled: PaymentAttempt = stale.processorRef
      ? { ...stale, status: 'reversal_pending', cancellationReason: 'attempt_abandoned', updatedAt: new Date(reversalDueAt.getTime() - REVERSAL_RETRY_MS) }
      : { ...stale, status: 'failed', declineCode: 'processing_unavailable', updatedAt: now };
    await tx.attempts.recordOutcome(settled);
    return settled;
  }

  async function currentView(orderId: string): Promise<CheckoutView> {
    const order = await deps.uow.run((tx) => tx.orders.findForCheckout(orderId));
    if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
    const attempts = await deps.uow.run((tx) => tx.attempts.listForOrder(orderId));
    return checkoutView(order, attempts, await merchantOf(order));
  }

  /**
   * The customer's answer for an attempt that has ended (or waits for a challenge).
   * @throws DomainError checkout.expired when the order expired instead.
   */
  function result(view: CheckoutView, attempt: PaymentAttempt): PaymentResult {
    if (view.order.status === 'paid') return { status: 'succeeded', view, challenge: undefined, declineCode: undefined };
    if (view.order.status === 'expired') throw new DomainError('checkout.expired', 'This checkout has expired.');
    if (attempt.status === 'requires_authentication') {
      return { status: 'requires_authentication', view, challenge: { attemptId: attempt.id, testCode: attempt.challengeTestCode ?? undefined }, declineCode: undefined };
    }
    return { status: 'failed', view, challenge: undefined, declineCode: attempt.declineCode ?? undefined };
  }

  /**
   * Undoes a capture (or whatever an abandoned attempt left) at the acquirer,
   * then records the attempt reversed with order.payment_reversed. When the
   * acquirer cannot be reached the attempt stays reversal_pending and the
   * sweep tries again; the reference (attempt and processor reference) makes a
   * repeated reversal of the same thing a no-op at the acquirer.
   */
  async function reverse(pending: PaymentAttempt, amount: bigint): Promise<boolean> {
    const processor = processors.get(pending.route);
    try {
      if (!processor || !pending.processorRef) throw new Error(`attempt ${pending.id} cannot be reversed: no route ${pending.route} or no processor reference`);
      const undone = await processor.reverse(pending.processorRef, amount, `${pending.id}/${pending.processorRef}`);
      if (undone.kind === 'declined') throw new Error(`reversal of ${pending.id} on ${pending.route} declined: ${undone.declineCode}`);
    } catch (err) {
      deps.onBackgroundError(err);
      return false;
    }
    await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(pending.orderId);
      const current = order && (await tx.attempts.findById(order.id, pending.id));
      if (!order || current?.status !== 'reversal_pending') return; // another sweeper finished it first
      await tx.attempts.recordOutcome({ ...current, status: 'reversed', updatedAt: deps.clock.now() });
      const t = noteReversal(order, { attemptId: current.id, method: current.method, route: current.route, reason: current.cancellationReason ?? 'attempt_abandoned' }, eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
    });
    return true;
  }

  /**
   * Records a captured payment as the order's, under the order's lock. If the
   * order can no longer take it (paid another way, expired) or the attempt was
   * given up meanwhile, the capture is reversed instead: no capture is ever
   * left without a record.
   */
  async function finishSuccess(attempt: PaymentAttempt, processorRef: string, authentication: AuthenticationResult): Promise<PaymentResult> {
    const merchant = await merchantOfOrder(attempt.orderId);
    const recorded = await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(attempt.orderId);
      if (!order) throw new Error(`order ${attempt.orderId} vanished`);
      const current = await tx.attempts.findById(order.id, attempt.id);
      const now = deps.clock.now();
      if (!takesPayment(order) || current?.status !== 'processing') {
        const reason = takesPayment(order) ? 'attempt_abandoned' : reasonOrderRefuses(order);
        const pending: PaymentAttempt = { ...attempt, status: 'reversal_pending', processorRef, authentication, cancellationReason: reason, updatedAt: now };
        await tx.attempts.recordOutcome(pending);
        return { kind: 'reversal' as const, reversal: pending, amount: order.amount };
      }
      const done: PaymentAttempt = { ...attempt, status: 'succeeded', processorRef, authentication, declineCode: null, updatedAt: now };
      await tx.attempts.recordOutcome(done);
      const t = markPaid(order, { method: attempt.method, settlement: computeSettlement({ amount: order.amount, currency: order.currency }, merchant.settlementCurrency) }, eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
      return { kind: 'paid' as const, view: checkoutView(t.order, await tx.attempts.listForOrder(order.id), merchant) };
    });
    if (recorded.kind === 'paid') return { status: 'succeeded', view: recorded.view, challenge: undefined, declineCode: undefined };
    await reverse(recorded.reversal, recorded.amount);
    return result(await currentView(attempt.orderId), recorded.reversal);
  }

  async function finishFailure(attempt: PaymentAttempt, declineCode: DeclineCode, authentication: AuthenticationResult, retried: boolean): Promise<PaymentResult> {
    const merchant = await merchantOfOrder(attempt.orderId);
    const view = await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(attempt.orderId);
      if (!order) throw new Error(`order ${attempt.orderId} vanished`);
      const failed: PaymentAttempt = { ...attempt, status: 'failed', declineCode, authentication, updatedAt: deps.clock.now() };
      await tx.attempts.recordOutcome(failed);
      let current = order;
      if (takesPayment(order)) {
        const t = markFailed(order, { declineCode, route: attempt.route, retried, attemptId: attempt.id, method: attempt.method }, eventIds());
        await tx.orders.saveTransition(t.order);
        await tx.outbox.append(t.event);
        current = t.order;
      }
      return checkoutView(current, await tx.attempts.listForOrder(order.id), merchant);
    });
    return { status: 'failed', view, challenge: undefined, declineCode };
  }

  /** Captures an approved authorization and records the end of the attempt. */
  async function captureAndFinish(processor: PaymentProcessor, attempt: PaymentAttempt, processorRef: string, authentication: AuthenticationResult, retried: boolean): Promise<PaymentResult> {
    const order = await deps.uow.run(async (tx) => {
      // Known before anything is captured: a process that dies from here on leaves an attempt the sweep reverses.
      await tx.attempts.recordOutcome({ ...attempt, processorRef, updatedAt: deps.clock.now() });
      return tx.orders.findForCheckout(attempt.orderId);
    });
    const captured: SettleResult = await processor.capture(processorRef, order!.amount);
    if (captured.kind === 'declined') return finishFailure(attempt, captured.declineCode, authentication, retried);
    return finishSuccess(attempt, captured.processorRef, authentication);
  }

  async function authorize(processor: PaymentProcessor, attempt: PaymentAttempt, order: Order, instrument: PaymentInstrument): Promise<AuthorizationResult> {
    return processor.authorize({
      attemptId: attempt.id,
      merchantId: order.merchantId,
      livemode: order.livemode,
      amount: order.amount,
      currency: order.currency,
      card: instrument.method === 'card' ? instrument.card : undefined,
    });
  }

  async function waitForSubmission(orderId: string, submissionId: string): Promise<PaymentResult> {
    const deadline = Date.now() + (deps.replayWaitMs ?? 15_000);
    for (;;) {
      const legs = await deps.uow.run((tx) => tx.attempts.findBySubmission(orderId, submissionId));
      const last = legs.at(-1)!;
      if (last.status !== 'processing') return result(await currentView(orderId), last);
      if (Date.now() > deadline) throw new DomainError('checkout.payment_in_progress', 'This payment is still being processed; refresh the page in a moment.');
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * Refuses a submission beyond the card-testing limits of its client address
   * or its merchant. Concurrent submissions must not all read the same count:
   * those of one address are serialised (a lock per address, held to the end
   * of the reservation, so each sees the attempts committed before it), and
   * those of one merchant once fewer than MERCHANT_LOCK_MARGIN points remain
   * (below that, the submissions in flight at once cannot overrun the limit).
   * An attempt still processing counts as a decline until it ends.
   */
  async function checkVelocity(tx: TransactionScope, order: Order, client: PaymentClient): Promise<void> {
    const { perClientAddress, perMerchant, windowMs, declineWeight } = deps.velocity;
    if (perClientAddress <= 0 && perMerchant <= 0) return;
    const since = new Date(deps.clock.now().getTime() - windowMs);
    let clientAddress: AttemptTally | undefined;
    if (perClientAddress > 0 && client.address) {
      const scope = { clientAddress: velocityAddress(client.address) };
      await tx.attempts.serialiseTally(scope);
      clientAddress = await tx.attempts.tally(scope, since);
    }
    let merchant: AttemptTally = { attempts: 0, declines: 0 };
    if (perMerchant > 0) {
      const scope = { merchantId: order.merchantId, livemode: order.livemode };
      merchant = await tx.attempts.tally(scope, since);
      if (perMerchant - velocityScore(merchant, declineWeight) <= MERCHANT_LOCK_MARGIN) {
        await tx.attempts.serialiseTally(scope);
        merchant = await tx.attempts.tally(scope, since);
      }
    }
    assertWithinVelocity(deps.velocity, { clientAddress, merchant });
  }

  return {
    async view(checkoutId) {
      const orderId = orderIdOfCheckout(checkoutId);
      const order = await inTransaction(async (tx, release) => {
        const found = await tx.orders.findForCheckout(orderId);
        if (!found || !isDueToExpire(found, deps.clock.now())) return found;
        const locked = await tx.orders.lock(orderId);
        return locked ? expireIfDue(tx, locked, release) : undefined;
      });
      if (!order) throw new ApplicationError('checkout.not_found', 'No such checkout.');
      const attempts = await deps.uow.run((tx) => tx.attempts.listForOrder(orderId));
      return checkoutView(order, attempts, await merchantOf(order));
    },

    async pay(checkoutId, token, submissionId, instrument, client) {
      if (!SUBMISSION_ID.test(submissionId)) {
        throw new DomainError('request.parameter_invalid', 'submission_id must be 1 to 100 printable ASCII characters.', 'submission_id');
      }
      const merchant = await merchantOfOrder(orderIdOfCheckout(checkoutId));
      const reserved = await inTransaction(async (tx, release) => {
        const locked = await lockCheckout(tx, checkoutId, token);
        const prior = await tx.attempts.findBySubmission(locked.id, submissionId);
        if (prior.length > 0) return { replay: true as const, order: locked };
        const order = await expireIfDue(tx, locked, release);
        if (order.status === 'expired') return { expired: true as const, order };
        assertPayable(order, deps.clock.now());
        if (!merchant.paymentMethods.includes(instrument.method)) {
          throw new DomainError('checkout.method_unavailable', `Payment by ${instrument.method} is not switched on for this merchant.`);
        }
        const now = deps.clock.now();
        const attempts = await tx.attempts.listForOrder(order.id);
        for (const stale of attempts.filter((a) => a.status === 'processing' && !isInFlight(a, now))) {
          // Left behind by a process that died mid-payment: without this the order could never be paid.
          await settleAbandoned(tx, stale, now, now);
        }
        if (attempts.some((a) => isInFlight(a, now))) {
          throw new DomainError('checkout.payment_in_progress', 'Another payment for this order is being processed.');
        }
        if (attempts.filter((a) => !a.retry).length >= MAX_ATTEMPTS_PER_ORDER) {
          throw new DomainError('checkout.attempts_exhausted', `This order has had ${MAX_ATTEMPTS_PER_ORDER} payment attempts and accepts no more.`);
        }
        await checkVelocity(tx, order, client);
        // A new submission supersedes a challenge the customer walked away from; its authorization is released.
        for (const waiting of attempts.filter((a) => a.status === 'requires_authentication')) {
          const abandoned: PaymentAttempt = { ...waiting, status: 'failed', declineCode: 'authentication_failed', authentication: 'abandoned', updatedAt: now };
          await tx.attempts.recordOutcome(abandoned);
          release(abandoned);
        }
        const routes = order.livemode ? deps.liveRoutes : deps.testRoutes;
        const attempt: PaymentAttempt = {
          id: deps.ids.newId(ATTEMPT_ID_PREFIX),
          orderId: order.id,
          merchantId: order.merchantId,
          livemode: order.livemode,
          submissionId,
          method: instrument.method,
          route: routes?.primary.route ?? 'none',
          status: 'processing',
          declineCode: null,
          authentication: 'not_required',
          cardBrand: instrument.method === 'card' ? instrument.card.brand : null,
          cardLast4: instrument.method === 'card' ? instrument.card.last4 : null,
          retry: false,
          processorRef: null,
          cancellationReason: null,
          challengeTestCode: null,
          clientAddress: client.address ? velocityAddress(client.address) : null,
          createdAt: now,
          updatedAt: now,
        };
        await tx.attempts.insert(attempt);
        return { attempt, order, routes };
      });
      if ('replay' in reserved) return waitForSubmission(reserved.order.id, submissionId);
      if ('expired' in reserved) throw new DomainError('checkout.expired', 'This checkout has expired.');
      const { attempt, order, routes } = reserved;

      // Live mode: test cards never reach an acquirer, and without live routes nothing does.
      if (order.livemode && instrument.method === 'card' && (await deps.testCards.isTestCard(instrument.card.number))) {
        return finishFailure(attempt, 'test_card_in_live_mode', 'not_required', false);
      }
      if (!routes) return finishFailure(attempt, 'processing_unavailable', 'not_required', false);

      let current = attempt;
      let processor = routes.primary;
      let outcome = await authorize(processor, current, order, instrument);
      if (outcome.kind === 'declined' && DECLINES[outcome.declineCode].soft) {
        const now = deps.clock.now();
        const retry: PaymentAttempt = { ...attempt, id: deps.ids.newId(ATTEMPT_ID_PREFIX), route: routes.alternative.route, retry: true, createdAt: now, updatedAt: now };
        const firstLeg: PaymentAttempt = { ...attempt, status: 'failed', declineCode: outcome.declineCode, updatedAt: now };
        await deps.uow.run(async (tx) => {
          await tx.attempts.recordOutcome(firstLeg);
          await tx.attempts.insert(retry);
        });
        current = retry;
        processor = routes.alternative;
        outcome = await authorize(processor, current, order, instrument);
      }
      switch (outcome.kind) {
        case 'approved':
          return captureAndFinish(processor, current, outcome.processorRef, 'not_required', current.retry);
        case 'authentication_required': {
          const waiting: PaymentAttempt = {
            ...current,
            status: 'requires_authentication',
            authentication: 'required',
            processorRef: outcome.processorRef,
            challengeTestCode: outcome.testCode ?? null,
            updatedAt: deps.clock.now(),
          };
          await deps.uow.run((tx) => tx.attempts.recordOutcome(waiting));
          return { status: 'requires_authentication', view: await currentView(order.id), challenge: { attemptId: waiting.id, testCode: outcome.testCode }, declineCode: undefined };
        }
        case 'declined':
          return finishFailure(current, outcome.declineCode, 'not_required', current.retry);
      }
    },

    async authenticate(checkoutId, token, attemptId, answer) {
      const claimed = await inTransaction(async (tx, release) => {
        const locked = await lockCheckout(tx, checkoutId, token);
        if (!(await tx.attempts.findById(locked.id, attemptId))) throw new ApplicationError('checkout.attempt_not_found', 'No such payment attempt for this checkout.');
        // Whether the order still takes this payment is decided here, under its lock, before anything is captured.
        const order = await expireIfDue(tx, locked, release);
        const attempt = (await tx.attempts.findById(order.id, attemptId))!;
        if (attempt.status !== 'requires_authentication') return { settled: true as const, attempt };
        if (!takesPayment(order)) {
          const canceled: PaymentAttempt = { ...attempt, status: 'canceled', cancellationReason: reasonOrderRefuses(order), updatedAt: deps.clock.now() };
          await tx.attempts.recordOutcome(canceled);
          release(canceled);
          return { settled: true as const, attempt: canceled };
        }
        // Claim the challenge so that a second answer cannot run alongside this one.
        const processing: PaymentAttempt = { ...attempt, status: 'processing', updatedAt: deps.clock.now() };
        await tx.attempts.recordOutcome(processing);
        return { settled: false as const, attempt: processing };
      });
      const { attempt } = claimed;
      if (claimed.settled) {
        if (attempt.status === 'processing') return waitForSubmission(attempt.orderId, attempt.submissionId ?? '');
        return result(await currentView(attempt.orderId), attempt);
      }
      if ('abandon' in answer) {
        await voidAll([attempt]);
        return finishFailure(attempt, 'authentication_failed', 'abandoned', attempt.retry);
      }
      const processor = processors.get(attempt.route);
      if (!processor || !attempt.processorRef) throw new Error(`attempt ${attempt.id} has no route ${attempt.route}`);
      const answered = await processor.completeAuthentication(attempt.processorRef, answer.code);
      if (answered.kind === 'declined') return finishFailure(attempt, answered.declineCode, 'failed', attempt.retry);
      return captureAndFinish(processor, attempt, answered.processorRef, 'passed', attempt.retry);
    },

    async receiveTransfer(scoped) {
      const merchant = await merchantOf(scoped);
      return inTransaction(async (tx, release) => {
        const locked = await tx.orders.lock(scoped.id);
        if (!locked) throw new ApplicationError('order.not_found', `No such order: "${scoped.id}".`, 'id');
        const order = await expireIfDue(tx, locked, release);
        if (order.status === 'expired') throw new DomainError('checkout.expired', 'This order has expired; a transfer for it would be returned to the payer.');
        assertPayable(order, deps.clock.now());
        if (!merchant.paymentMethods.includes('bank_transfer')) {
          throw new DomainError('checkout.method_unavailable', 'Bank transfer is not switched on for this merchant.');
        }
        const attempts = await tx.attempts.listForOrder(order.id);
        if (attempts.some((a) => isInFlight(a, deps.clock.now()))) {
          throw new DomainError('checkout.payment_in_progress', 'A card payment for this order is being processed.');
        }
        // The order is paid now: a challenge still open could otherwise capture a second time.
        await cancelChallenges(tx, attempts, 'order_paid', release);
        const now = deps.clock.now();
        const method: PaymentMethod = 'bank_transfer';
        await tx.attempts.insert({
          id: deps.ids.newId(ATTEMPT_ID_PREFIX),
          orderId: order.id,
          merchantId: order.merchantId,
          livemode: order.livemode,
          submissionId: null,
          method,
          route: 'virtual_iban',
          status: 'succeeded',
          declineCode: null,
          authentication: 'not_required',
          cardBrand: null,
          cardLast4: null,
          retry: false,
          processorRef: null,
          cancellationReason: null,
          challengeTestCode: null,
          clientAddress: null,
          createdAt: now,
          updatedAt: now,
        });
        const t = markPaid(order, { method, settlement: computeSettlement({ amount: order.amount, currency: order.currency }, merchant.settlementCurrency) }, eventIds());
        await tx.orders.saveTransition(t.order);
        await tx.outbox.append(t.event);
        return t.order;
      });
    },

    async expireDue(limit) {
      return inTransaction(async (tx, release) => {
        const due = await tx.orders.lockDueToExpire(deps.clock.now(), limit);
        let expired = 0;
        for (const order of due) if ((await expireIfDue(tx, order, release)).status === 'expired') expired += 1;
        return expired;
      });
    },

    async recoverAttempts(limit) {
      const now = deps.clock.now();
      const taken = await deps.uow.run(async (tx) => {
        const claimed = await tx.attempts.claimUnsettled(
          { processing: new Date(now.getTime() - STALE_PROCESSING_MS), reversal: new Date(now.getTime() - REVERSAL_RETRY_MS) },
          now,
          limit,
        );
        const toReverse: Array<{ attempt: PaymentAttempt; amount: bigint }> = [];
        for (const attempt of claimed) {
          // Reversed right below: ours until REVERSAL_RETRY_MS from now, so no other sweeper takes it meanwhile.
          const settled = attempt.status === 'processing' ? await settleAbandoned(tx, attempt, now, new Date(now.getTime() + REVERSAL_RETRY_MS)) : attempt;
          if (settled.status !== 'reversal_pending') continue;
          const order = await tx.orders.findForCheckout(settled.orderId);
          if (order) toReverse.push({ attempt: settled, amount: order.amount });
        }
        return { count: claimed.length, toReverse };
      });
      for (const { attempt, amount } of taken.toReverse) await reverse(attempt, amount);
      return taken.count;
    },
  };
}
