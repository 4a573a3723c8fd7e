import { timingSafeEqual } from 'node:crypto';
import type { Card } from '../../domain/payment/card.ts';
import { DECLINES, type DeclineCode } from '../../domain/payment/decline-code.ts';
import {
  ATTEMPT_ID_PREFIX,
  MAX_ATTEMPTS_PER_ORDER,
  type AuthenticationResult,
  type PaymentAttempt,
  type PaymentMethod,
} from '../../domain/payment/payment-attempt.entity.ts';
import { computeSettlement } from '../../domain/payment/settlement.ts';
import { assertPayable, isDueToExpire, markExpired, markFailed, markPaid } from '../../domain/order/order-transitions.ts';
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

/** Where a payment left the order. */
export interface PaymentResult {
  readonly status: 'succeeded' | 'requires_authentication' | 'failed';
  readonly view: CheckoutView;
  readonly challenge: { attemptId: string; hint: string } | undefined;
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
  /** How long a resubmission waits for the first submission to finish. */
  readonly replayWaitMs?: number;
}

/** The payment engine: reserve an attempt, route it, record the outcome. */
export interface PaymentEngine {
  /** Loads the checkout (expiring it first if its time has come). */
  view(checkoutId: string): Promise<CheckoutView>;
  /** Pays with a card or the wallet; idempotent per submission id. */
  pay(checkoutId: string, token: string, submissionId: string, instrument: PaymentInstrument): Promise<PaymentResult>;
  /** Completes or abandons a pending 3-D Secure challenge. */
  authenticate(checkoutId: string, token: string, attemptId: string, answer: { code: string } | { abandon: true }): Promise<PaymentResult>;
  /** Marks a test-mode bank transfer arrived for an order of the caller. */
  receiveTransfer(order: Order): Promise<Order>;
  /** Expires up to limit open orders past their time; answers how many. */
  expireDue(limit: number): Promise<number>;
}

const SUBMISSION_ID = /^[\x21-\x7e]{1,100}$/;

/** An attempt still "processing" after this long was abandoned by a crashed process. */
export const STALE_PROCESSING_MS = 120_000;

function tokenMatches(expected: string, given: string): boolean {
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Creates the payment engine. Safe under concurrency: a submission first
 * reserves an attempt under the order's row lock (refusing while another is
 * processing), a resubmitted form finds its first attempt by submission id,
 * and the database admits one succeeded attempt per order.
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
    if (!order) throw new DomainError('checkout.not_found', 'No such checkout.');
    return merchantOf(order);
  }

  async function lockCheckout(tx: TransactionScope, checkoutId: string, token: string): Promise<Order> {
    const order = await tx.orders.lock(orderIdOfCheckout(checkoutId));
    if (!order) throw new DomainError('checkout.not_found', 'No such checkout.');
    if (!tokenMatches(order.checkoutToken, token)) {
      throw new DomainError('checkout.token_invalid', 'The checkout token is missing or wrong; reload the checkout page.');
    }
    return order;
  }

  /** Expires the order in this transaction if its time has come; true when it did. */
  async function expireIfDue(tx: TransactionScope, order: Order): Promise<Order> {
    if (!isDueToExpire(order, deps.clock.now())) return order;
    const t = markExpired(order, eventIds());
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    return t.order;
  }

  async function currentView(orderId: string): Promise<CheckoutView> {
    const order = await deps.uow.run((tx) => tx.orders.findForCheckout(orderId));
    if (!order) throw new DomainError('checkout.not_found', 'No such checkout.');
    const attempts = await deps.uow.run((tx) => tx.attempts.listForOrder(orderId));
    return checkoutView(order, attempts, await merchantOf(order));
  }

  function result(view: CheckoutView, attempt: PaymentAttempt): PaymentResult {
    if (view.order.status === 'paid') return { status: 'succeeded', view, challenge: undefined, declineCode: undefined };
    if (attempt.status === 'requires_authentication') {
      return { status: 'requires_authentication', view, challenge: { attemptId: attempt.id, hint: challengeHints.get(attempt.id) ?? '' }, declineCode: undefined };
    }
    return { status: 'failed', view, challenge: undefined, declineCode: attempt.declineCode ?? undefined };
  }

  // Hints shown on the simulated issuer page; kept per attempt for replays within this process.
  const challengeHints = new Map<string, string>();

  async function finishSuccess(attempt: PaymentAttempt, processorRef: string, authentication: AuthenticationResult): Promise<PaymentResult> {
    const merchant = await merchantOfOrder(attempt.orderId);
    const view = await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(attempt.orderId);
      if (!order) throw new Error(`order ${attempt.orderId} vanished`);
      const done: PaymentAttempt = { ...attempt, status: 'succeeded', processorRef, authentication, declineCode: null, updatedAt: deps.clock.now() };
      await tx.attempts.recordOutcome(done);
      const t = markPaid(order, { method: attempt.method, settlement: computeSettlement({ amount: order.amount, currency: order.currency }, merchant.settlementCurrency) }, eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
      return checkoutView(t.order, await tx.attempts.listForOrder(order.id), merchant);
    });
    return { status: 'succeeded', view, challenge: undefined, declineCode: undefined };
  }

  async function finishFailure(attempt: PaymentAttempt, declineCode: DeclineCode, authentication: AuthenticationResult, retried: boolean): Promise<PaymentResult> {
    const merchant = await merchantOfOrder(attempt.orderId);
    const view = await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(attempt.orderId);
      if (!order) throw new Error(`order ${attempt.orderId} vanished`);
      const failed: PaymentAttempt = { ...attempt, status: 'failed', declineCode, authentication, updatedAt: deps.clock.now() };
      await tx.attempts.recordOutcome(failed);
      let current = order;
      if (order.status === 'pending' || order.status === 'failed') {
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
    const order = await deps.uow.run((tx) => tx.orders.findForCheckout(attempt.orderId));
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

  return {
    async view(checkoutId) {
      const orderId = orderIdOfCheckout(checkoutId);
      const order = await deps.uow.run(async (tx) => {
        const found = await tx.orders.findForCheckout(orderId);
        if (!found || !isDueToExpire(found, deps.clock.now())) return found;
        const locked = await tx.orders.lock(orderId);
        return locked ? expireIfDue(tx, locked) : undefined;
      });
      if (!order) throw new DomainError('checkout.not_found', 'No such checkout.');
      const attempts = await deps.uow.run((tx) => tx.attempts.listForOrder(orderId));
      return checkoutView(order, attempts, await merchantOf(order));
    },

    async pay(checkoutId, token, submissionId, instrument) {
      if (!SUBMISSION_ID.test(submissionId)) {
        throw new DomainError('request.parameter_invalid', 'submission_id must be 1 to 100 printable ASCII characters.', 'submission_id');
      }
      const merchant = await merchantOfOrder(orderIdOfCheckout(checkoutId));
      const reserved = await deps.uow.run(async (tx) => {
        const locked = await lockCheckout(tx, checkoutId, token);
        const prior = await tx.attempts.findBySubmission(locked.id, submissionId);
        if (prior.length > 0) return { replay: true as const, order: locked };
        const order = await expireIfDue(tx, locked);
        if (order.status === 'expired') return { expired: true as const, order };
        assertPayable(order, deps.clock.now());
        if (!merchant.paymentMethods.includes(instrument.method)) {
          throw new DomainError('checkout.method_unavailable', `Payment by ${instrument.method} is not switched on for this merchant.`);
        }
        const attempts = await tx.attempts.listForOrder(order.id);
        const nowMs = deps.clock.now().getTime();
        for (const stale of attempts.filter((a) => a.status === 'processing' && nowMs - a.updatedAt.getTime() >= STALE_PROCESSING_MS)) {
          // Left behind by a process that died mid-payment: without this the order could never be paid.
          // A live acquirer adapter must ask the acquirer what became of it before this is safe there.
          await tx.attempts.recordOutcome({ ...stale, status: 'failed', declineCode: 'processing_unavailable', updatedAt: new Date(nowMs) });
        }
        if (attempts.some((a) => a.status === 'processing' && nowMs - a.updatedAt.getTime() < STALE_PROCESSING_MS)) {
          throw new DomainError('checkout.payment_in_progress', 'Another payment for this order is being processed.');
        }
        if (attempts.filter((a) => !a.retry).length >= MAX_ATTEMPTS_PER_ORDER) {
          throw new DomainError('checkout.attempts_exhausted', `This order has had ${MAX_ATTEMPTS_PER_ORDER} payment attempts and accepts no more.`);
        }
        const now = deps.clock.now();
        // A new submission supersedes a challenge the customer walked away from.
        for (const waiting of attempts.filter((a) => a.status === 'requires_authentication')) {
          await tx.attempts.recordOutcome({ ...waiting, status: 'failed', declineCode: 'authentication_failed', authentication: 'abandoned', updatedAt: now });
        }
        const routes = order.livemode ? deps.liveRoutes : deps.testRoutes;
        const attempt: PaymentAttempt = {
          id: deps.ids.newId(ATTEMPT_ID_PREFIX),
          orderId: order.id,
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
          const waiting: PaymentAttempt = { ...current, status: 'requires_authentication', authentication: 'required', processorRef: outcome.processorRef, updatedAt: deps.clock.now() };
          await deps.uow.run((tx) => tx.attempts.recordOutcome(waiting));
          challengeHints.set(waiting.id, outcome.hint);
          return { status: 'requires_authentication', view: await currentView(order.id), challenge: { attemptId: waiting.id, hint: outcome.hint }, declineCode: undefined };
        }
        case 'declined':
          return finishFailure(current, outcome.declineCode, 'not_required', current.retry);
      }
    },

    async authenticate(checkoutId, token, attemptId, answer) {
      const claimed = await deps.uow.run(async (tx) => {
        const order = await lockCheckout(tx, checkoutId, token);
        const attempt = await tx.attempts.findById(order.id, attemptId);
        if (!attempt) throw new DomainError('checkout.attempt_not_found', 'No such payment attempt for this checkout.');
        if (attempt.status !== 'requires_authentication') return { settled: true as const, attempt };
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
      if ('abandon' in answer) return finishFailure(attempt, 'authentication_failed', 'abandoned', attempt.retry);
      const processor = processors.get(attempt.route);
      if (!processor || !attempt.processorRef) throw new Error(`attempt ${attempt.id} has no route ${attempt.route}`);
      const answered = await processor.completeAuthentication(attempt.processorRef, answer.code);
      if (answered.kind === 'declined') return finishFailure(attempt, answered.declineCode, 'failed', attempt.retry);
      return captureAndFinish(processor, attempt, answered.processorRef, 'passed', attempt.retry);
    },

    async receiveTransfer(scoped) {
      const merchant = await merchantOf(scoped);
      return deps.uow.run(async (tx) => {
        const locked = await tx.orders.lock(scoped.id);
        if (!locked) throw new DomainError('order.not_found', `No such order: "${scoped.id}".`, 'id');
        const order = await expireIfDue(tx, locked);
        if (order.status === 'expired') throw new DomainError('checkout.expired', 'This order has expired; a transfer for it would be returned to the payer.');
        assertPayable(order, deps.clock.now());
        if (!merchant.paymentMethods.includes('bank_transfer')) {
          throw new DomainError('checkout.method_unavailable', 'Bank transfer is not switched on for this merchant.');
        }
        const attempts = await tx.attempts.listForOrder(order.id);
        if (attempts.some((a) => a.status === 'processing')) throw new DomainError('checkout.payment_in_progress', 'A card payment for this order is being processed.');
        const now = deps.clock.now();
        const method: PaymentMethod = 'bank_transfer';
        await tx.attempts.insert({
          id: deps.ids.newId(ATTEMPT_ID_PREFIX),
          orderId: order.id,
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
      return deps.uow.run(async (tx) => {
        const due = await tx.orders.lockDueToExpire(deps.clock.now(), limit);
        for (const order of due) await expireIfDue(tx, order);
        return due.length;
      });
    },
  };
}
