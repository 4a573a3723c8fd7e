import type { Metrics, PaymentAttemptOutcome } from '../../../kernel/ports/metrics.port.ts';
import { EVENT_ID_PREFIX } from '../../event/domain/domain-event.ts';
import type { Order } from '../../order/domain/order.entity.ts';
import { isDueToExpire, markAuthorized, markExpired, markFailed, markPaid, markVoided, noteReversal, takesPayment, reasonOrderRefuses } from '../../order/domain/order-transitions.ts';
import { authorizationExpiry } from '../../order/domain/capture.ts';
import { isInFlight } from '../domain/attempt-policy.ts';
import type { DeclineCode } from '../domain/decline-code.ts';
import type { AuthenticationResult, PaymentAttempt, PaymentMethod } from '../domain/payment-attempt.entity.ts';
import { cancel, holdForReversal, markAuthorized as markLegAuthorized, markCaptured, markReversed, recordDecline, type PaymentChange, type PaymentRecord } from '../domain/payment.entity.ts';
import { settlementBreakdown } from '../domain/settlement.ts';
import { capturePosting, voidPosting } from '../../ledger/domain/postings.ts';
import { ledgerTransactionId } from '../../ledger/domain/ledger.ts';
import type { VelocityLimits } from '../domain/velocity.ts';
import { recordCompletion } from '../../payment-link/domain/payment-link.entity.ts';
import { assertLinkTakesPayment } from '../../payment-link/domain/link-payment-policy.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { MerchantRecord, MerchantRepository } from '../../merchant/ports/merchant-repository.port.ts';
import type { OrderRepository } from '../../order/ports/order-repository.port.ts';
import type { PaymentProcessor } from '../ports/payment-processor.port.ts';
import type { PaymentRepository } from '../ports/payment-repository.port.ts';
import type { TestCardDirectory } from '../ports/test-card-directory.port.ts';
import type { AfterCommit, TransactionScope, UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { CardSaving } from './card-saving.ts';

/** Acquirer routes: attempts go to primary; a soft decline is retried once on alternative. */
export interface Routes {
  readonly primary: PaymentProcessor;
  readonly alternative: PaymentProcessor;
}

/** What the payment use cases run on. */
export interface PaymentDeps {
  readonly uow: UnitOfWork;
  /** For single reads, which take no transaction. */
  readonly reads: { readonly orders: OrderRepository; readonly payments: PaymentRepository };
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
   * pending and the recovery sweep retries it.
   */
  readonly onBackgroundError: (err: unknown) => void;
  /** Where each attempt's outcome (by method, route and decline code) and each card-testing refusal are counted; nothing is counted without it. */
  readonly metrics?: Pick<Metrics, 'paymentAttempt' | 'rateLimitRefused'>;
  /** The checkout's "save this card", bound to its payment; without it, a request to save a card is ignored. */
  readonly cardSaving?: CardSaving;
}

/** How a payment attempt ended for the caller: the order at its new state, and the order's attempts. */
export interface Settled {
  readonly order: Order;
  readonly attempts: readonly PaymentAttempt[];
  readonly merchant: MerchantRecord;
}

/** Authorizations released inside a transaction, voided at their acquirer once it commits. */
export type Release = (leg: PaymentAttempt) => void;

/** Every attempt of an order, oldest first. */
export async function attemptsOf(payments: PaymentRepository, orderId: string): Promise<PaymentAttempt[]> {
  return (await payments.listAttemptsForOrders([orderId])).get(orderId) ?? [];
}

/** A reversal the payment use cases left pending is retried by the sweep only after this long. */
export const REVERSAL_RETRY_MS = 30_000;

/**
 * The machinery the payment use cases share: acquirer routes, the merchant
 * cache, transactions that release authorizations after they commit, expiry
 * under the order's lock, and the end of a payment (capture recorded, or
 * reversed when the order can no longer take it).
 */
export interface PaymentKit {
  readonly deps: PaymentDeps;
  /** Ids and time for the next event. */
  eventIds(): { eventId: string; now: Date };
  /** The routes of a mode (undefined: no live acquirer yet). */
  routesOf(livemode: boolean): Routes | undefined;
  /** The processor of a route an attempt was made on. */
  processorOf(route: string): PaymentProcessor | undefined;
  /** The merchant, from a short cache; never call it inside a transaction (it would take a second connection). */
  merchantOf(merchantId: string): Promise<MerchantRecord>;
  /** The merchant inside a transaction: from the cache, or read through the transaction's own connection. */
  merchantIn(tx: TransactionScope, merchantId: string): Promise<MerchantRecord>;
  /** Runs work in one transaction; the authorizations it released are voided after the commit. */
  inTransaction<T>(work: (tx: TransactionScope, release: Release) => Promise<T>): Promise<T>;
  /** The Release of a transaction someone else opened (an idempotent call's): voids after its commit. */
  releaseAfter(afterCommit: AfterCommit): Release;
  /** Releases authorizations at their acquirers; a failure leaves a hold that lapses by itself. */
  voidAll(legs: readonly PaymentAttempt[]): Promise<void>;
  /**
   * Expires the order in this transaction if its time has come, canceling any
   * open challenge; a payment in flight decides instead.
   */
  expireIfDue(tx: TransactionScope, order: Order, release: Release): Promise<Order>;
  /**
   * Expires the open order (its row locked by the caller) in this transaction, due or not:
   * order.expired, and any open challenge canceled (its authorization released after `tx`).
   * The caller has checked that no payment is in flight.
   */
  expire(tx: TransactionScope, order: Order, release: Release): Promise<Order>;
  /**
   * Reserves the completion of the order's payment link for a payment about to start, in the
   * transaction that starts it: locks the link (so the payments of its orders start one at a time)
   * and refuses when it takes no payment. The reservation is the started payment itself: while it is
   * processing or waiting for its challenge, no other order of a single-use link can start one; it
   * is released when the attempt fails, is declined or canceled (the order's expiry cancels it).
   * Nothing for an order no link created.
   * @throws DomainError checkout.link_inactive, checkout.link_used
   */
  claimLink(tx: TransactionScope, order: Order): Promise<void>;
  /** Cancels the order's open challenges in this transaction (from `records`, the order's payments read under its lock, when given); their authorizations are released after it. */
  cancelChallenges(tx: TransactionScope, orderId: string, reason: 'order_paid' | 'order_expired', release: Release, records?: readonly PaymentRecord[]): Promise<void>;
  /**
   * Marks the order paid by a payment that captured `captured` (its whole amount when absent):
   * transition, event and the capture's ledger transaction (fees on what was captured), in `tx`.
   */
  recordPaid(tx: TransactionScope, order: Order, payment: { readonly id: string; readonly method: PaymentMethod }, merchant: MerchantRecord, now: Date, captured?: bigint): Promise<Order>;
  /** Voids the paid order in `tx`: order.voided, and its capture undone in the ledger. */
  recordVoid(tx: TransactionScope, order: Order, paymentId: string): Promise<Order>;
  /**
   * Records an approved authorization of a manual order as the order's (authorized, order.authorized,
   * nothing in the ledger), or reverses it when the order cannot take it.
   */
  finishAuthorization(change: PaymentChange, authentication: AuthenticationResult): Promise<Settled & { readonly reversed: boolean }>;
  /** Records a captured payment as the order's, or reverses the capture when the order cannot take it. */
  finishSuccess(change: PaymentChange, captureRef: string, authentication: AuthenticationResult): Promise<Settled & { readonly reversed: boolean }>;
  /** Records a declined payment (the order fails, if it still takes payment). */
  finishFailure(change: PaymentChange, declineCode: DeclineCode, authentication: AuthenticationResult): Promise<Settled>;
  /**
   * Drops the card a payment's submission asked to save, in the transaction that records the payment
   * ending without success (the finish* functions and cancelChallenges drop their own).
   */
  dropHeldCard(tx: TransactionScope, change: PaymentChange): Promise<void>;
  /** Counts an attempt's outcome (the finish* functions count their own). */
  counted(change: PaymentChange, outcome: PaymentAttemptOutcome['outcome'], declineCode: DeclineCode | undefined): void;
  /** Undoes at the acquirer what a payment left there, then records it reversed with order.payment_reversed. */
  reverse(pending: PaymentChange): Promise<boolean>;
}

/** Builds the shared machinery of the payment use cases. */
export function createPaymentKit(deps: PaymentDeps): PaymentKit {
  const eventIds = () => ({ eventId: deps.ids.newId(EVENT_ID_PREFIX), now: deps.clock.now() });
  const processors = new Map<string, PaymentProcessor>();
  for (const routes of [deps.testRoutes, deps.liveRoutes]) {
    if (routes) for (const p of [routes.primary, routes.alternative]) processors.set(p.route, p);
  }

  // Merchants change rarely; a short cache spares a query per payment step.
  const merchantCache = new Map<string, { merchant: MerchantRecord; until: number }>();
  async function cachedMerchant(merchantId: string, read: (id: string) => Promise<MerchantRecord | undefined>): Promise<MerchantRecord> {
    const hit = merchantCache.get(merchantId);
    if (hit && hit.until > Date.now()) return hit.merchant;
    const merchant = await read(merchantId);
    if (!merchant) throw new Error(`merchant ${merchantId} not found`);
    if (merchantCache.size > 10_000) merchantCache.clear();
    merchantCache.set(merchantId, { merchant, until: Date.now() + 30_000 });
    return merchant;
  }
  const merchantOf = (merchantId: string) => cachedMerchant(merchantId, (id) => deps.merchants.findById(id));
  const merchantIn = (tx: TransactionScope, merchantId: string) => cachedMerchant(merchantId, (id) => tx.merchants.findById(id));

  async function voidAll(legs: readonly PaymentAttempt[]): Promise<void> {
    await Promise.all(
      legs.map(async (leg) => {
        const processor = processors.get(leg.route);
        if (!processor || !leg.processorRef) return;
        try {
          const released = await processor.void(leg.processorRef);
          if (released.kind === 'declined') throw new Error(`void of ${leg.id} on ${leg.route} declined: ${released.declineCode}`);
        } catch (err) {
          deps.onBackgroundError(err);
        }
      }),
    );
  }

  function releaseAfter(afterCommit: AfterCommit): Release {
    return (leg) => afterCommit(() => voidAll([leg]));
  }

  function inTransaction<T>(work: (tx: TransactionScope, release: Release) => Promise<T>): Promise<T> {
    return deps.uow.run((tx, afterCommit) => work(tx, releaseAfter(afterCommit)));
  }

  async function claimLink(tx: TransactionScope, order: Order): Promise<void> {
    if (!order.paymentLinkId) return;
    const link = await tx.links.lock(order.paymentLinkId);
    if (!link) throw new Error(`payment link ${order.paymentLinkId} of order ${order.id} vanished`);
    const othersInFlight = link.type === 'single_use' && (await tx.links.hasPaymentInFlight(link.id, order.id));
    assertLinkTakesPayment(link, othersInFlight, deps.clock.now());
  }

  async function cancelChallenges(tx: TransactionScope, orderId: string, reason: 'order_paid' | 'order_expired', release: Release, records?: readonly PaymentRecord[]): Promise<void> {
    const now = deps.clock.now();
    for (const record of records ?? (await tx.payments.listForOrder(orderId))) {
      const waiting = record.attempts.find((a) => a.status === 'requires_authentication');
      if (!waiting) continue;
      const canceled = cancel({ payment: record.payment, leg: waiting }, reason, now);
      await tx.payments.cancel(canceled);
      await dropHeldCard(tx, canceled);
      release(canceled.leg);
    }
  }

  /** Whether a payment may have a card held to save: a typed card's (a saved card's or a wallet's never). */
  function mayHoldCard(change: PaymentChange): boolean {
    return deps.cardSaving !== undefined && change.payment.method === 'card' && !change.leg.savedCardId;
  }

  async function dropHeldCard(tx: TransactionScope, change: PaymentChange): Promise<void> {
    if (mayHoldCard(change)) await deps.cardSaving!.drop(tx, change.payment.id);
  }

  /** The card held for a payment that has just succeeded, vaulted in the transaction recording it (only an order naming a customer holds one). */
  async function saveHeldCard(tx: TransactionScope, order: Order, change: PaymentChange): Promise<void> {
    if (order.customerId && mayHoldCard(change)) await deps.cardSaving!.save(tx, order, change.payment.id);
  }

  async function expireIfDue(tx: TransactionScope, order: Order, release: Release): Promise<Order> {
    if (!isDueToExpire(order, deps.clock.now())) return order;
    const attempts = await attemptsOf(tx.payments, order.id);
    if (attempts.some((a) => isInFlight(a, deps.clock.now()))) return order;
    return expire(tx, order, release);
  }

  async function expire(tx: TransactionScope, order: Order, release: Release): Promise<Order> {
    const t = markExpired(order, eventIds());
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    await cancelChallenges(tx, order.id, 'order_expired', release);
    return t.order;
  }

  /** The paid order voided, in `tx`: order.voided, and its capture undone in the ledger. */
  async function recordVoid(tx: TransactionScope, order: Order, paymentId: string): Promise<Order> {
    const t = markVoided(order, eventIds());
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    const capture = await tx.ledger.find(ledgerTransactionId('capture', paymentId));
    if (capture) await tx.ledger.post(voidPosting(capture, deps.clock.now()));
    return t.order;
  }

  async function reverse(pending: PaymentChange): Promise<boolean> {
    const { leg } = pending;
    const processor = processors.get(leg.route);
    try {
      if (!processor || !leg.processorRef) throw new Error(`attempt ${leg.id} cannot be reversed: no route ${leg.route} or no processor reference`);
      const undone = await processor.reverse(leg.processorRef, pending.payment.amount, `${leg.id}/${leg.processorRef}`);
      if (undone.kind === 'declined') throw new Error(`reversal of ${leg.id} on ${leg.route} declined: ${undone.declineCode}`);
    } catch (err) {
      deps.onBackgroundError(err);
      return false;
    }
    await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(leg.orderId);
      const current = order && (await tx.payments.findByAttempt(order.id, leg.id));
      if (!order || current?.leg.status !== 'reversal_pending') return; // another sweeper finished it first
      await tx.payments.markReversed(markReversed(current, deps.clock.now()));
      if (current.leg.cancellationReason === 'order_voided') {
        await recordVoid(tx, order, current.payment.id);
        return;
      }
      const t = noteReversal(order, { attemptId: leg.id, method: leg.method, route: leg.route, reason: current.leg.cancellationReason ?? 'attempt_abandoned' }, eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
    });
    return true;
  }

  /**
   * Marks the order paid by a payment that captured its whole amount, in `tx`: the order's
   * transition, its event, and the capture's ledger transaction (gross, fees, net).
   */
  async function recordPaid(tx: TransactionScope, order: Order, payment: { id: string; method: PaymentMethod }, merchant: MerchantRecord, now: Date, amount = order.amount): Promise<Order> {
    const captured = { amount, currency: order.currency };
    const settlement = settlementBreakdown(captured, merchant.settlementCurrency);
    const t = markPaid(order, { method: payment.method, settlement: settlement.net, captured: amount }, eventIds());
    await tx.orders.saveTransition(t.order);
    await tx.outbox.append(t.event);
    if (order.paymentLinkId) {
      // Counted with the payment (order, then link: the lock order of claimLink too).
      const link = await tx.links.lock(order.paymentLinkId);
      if (!link) throw new Error(`payment link ${order.paymentLinkId} of order ${order.id} vanished`);
      const completed = recordCompletion(link, order.id, eventIds());
      await tx.links.recordCompletion(completed.link);
      if (completed.event) await tx.outbox.append(completed.event);
    }
    await tx.ledger.post(
      capturePosting({ paymentId: payment.id, orderId: order.id, merchantId: order.merchantId, livemode: order.livemode, reference: order.reference, captured, settlement, at: now }),
    );
    return t.order;
  }

  async function finishSuccess(change: PaymentChange, captureRef: string, authentication: AuthenticationResult): Promise<Settled & { reversed: boolean }> {
    const merchant = await merchantOf(change.payment.merchantId);
    const recorded = await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(change.leg.orderId);
      if (!order) throw new Error(`order ${change.leg.orderId} vanished`);
      const current = await tx.payments.findByAttempt(order.id, change.leg.id);
      const now = deps.clock.now();
      const capture = { processorRef: captureRef, amount: change.payment.amount, capturedAt: now };
      if (!takesPayment(order) || current?.leg.status !== 'processing') {
        const reason = takesPayment(order) ? 'attempt_abandoned' : reasonOrderRefuses(order);
        const pending = holdForReversal(current ?? change, captureRef, reason, authentication, now, capture);
        await tx.payments.holdForReversal(pending);
        if (order.customerId) await dropHeldCard(tx, change);
        return { reversal: pending, order, attempts: await attemptsOf(tx.payments, order.id) };
      }
      await tx.payments.markCaptured(markCaptured(current, capture, authentication, now));
      const paid = await recordPaid(tx, order, { id: change.payment.id, method: change.payment.method }, merchant, now);
      // The card this payment was asked to save is saved with its success, or not at all.
      await saveHeldCard(tx, paid, change);
      return { reversal: undefined, order: paid, attempts: await attemptsOf(tx.payments, order.id) };
    });
    counted(change, recorded.reversal ? 'reversed' : 'succeeded', undefined);
    if (!recorded.reversal) return { order: recorded.order, attempts: recorded.attempts, merchant, reversed: false };
    await reverse(recorded.reversal);
    // What the customer sees after a reversal: the order as it now stands.
    const order = (await deps.reads.orders.findForCheckout(change.leg.orderId)) ?? recorded.order;
    const attempts = await attemptsOf(deps.reads.payments, order.id);
    return { order, attempts, merchant, reversed: true };
  }

  async function finishAuthorization(change: PaymentChange, authentication: AuthenticationResult): Promise<Settled & { reversed: boolean }> {
    const merchant = await merchantOf(change.payment.merchantId);
    const recorded = await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(change.leg.orderId);
      if (!order) throw new Error(`order ${change.leg.orderId} vanished`);
      const current = await tx.payments.findByAttempt(order.id, change.leg.id);
      const now = deps.clock.now();
      const processorRef = current?.leg.processorRef ?? change.leg.processorRef;
      if (!takesPayment(order) || current?.leg.status !== 'processing' || !processorRef) {
        // The authorization cannot become the order's: it is released at the acquirer (reverse releases what is only authorized).
        const reason = takesPayment(order) ? 'attempt_abandoned' : reasonOrderRefuses(order);
        const pending = holdForReversal(current ?? change, processorRef ?? '', reason, authentication, now);
        await tx.payments.holdForReversal(pending);
        if (order.customerId) await dropHeldCard(tx, change);
        return { reversal: pending, order, attempts: await attemptsOf(tx.payments, order.id) };
      }
      await tx.payments.markAuthorized(markLegAuthorized(current, authentication, now));
      // No money moved: nothing is posted to the ledger until the capture.
      const t = markAuthorized(order, { method: change.payment.method, expiresAt: authorizationExpiry(now) }, eventIds());
      await tx.orders.saveTransition(t.order);
      await tx.outbox.append(t.event);
      // The issuer approved the card: it is saved with the authorization, as a captured payment's is.
      await saveHeldCard(tx, t.order, change);
      return { reversal: undefined, order: t.order, attempts: await attemptsOf(tx.payments, order.id) };
    });
    counted(change, recorded.reversal ? 'reversed' : 'authorized', undefined);
    if (!recorded.reversal) return { order: recorded.order, attempts: recorded.attempts, merchant, reversed: false };
    await reverse(recorded.reversal);
    const order = (await deps.reads.orders.findForCheckout(change.leg.orderId)) ?? recorded.order;
    return { order, attempts: await attemptsOf(deps.reads.payments, order.id), merchant, reversed: true };
  }

  async function finishFailure(change: PaymentChange, declineCode: DeclineCode, authentication: AuthenticationResult): Promise<Settled> {
    const merchant = await merchantOf(change.payment.merchantId);
    const settled = await deps.uow.run(async (tx) => {
      const order = await tx.orders.lock(change.leg.orderId);
      if (!order) throw new Error(`order ${change.leg.orderId} vanished`);
      await tx.payments.recordDecline(recordDecline(change, declineCode, authentication, deps.clock.now()));
      if (order.customerId) await dropHeldCard(tx, change);
      let current = order;
      if (takesPayment(order)) {
        const t = markFailed(order, { declineCode, route: change.leg.route, retried: change.leg.retry, attemptId: change.leg.id, method: change.leg.method }, eventIds());
        await tx.orders.saveTransition(t.order);
        await tx.outbox.append(t.event);
        current = t.order;
      }
      return { order: current, attempts: await attemptsOf(tx.payments, order.id), merchant };
    });
    counted(change, 'declined', declineCode);
    return settled;
  }

  /** Counts an attempt's outcome once it is recorded. */
  function counted(change: PaymentChange, outcome: PaymentAttemptOutcome['outcome'], declineCode: DeclineCode | undefined): void {
    deps.metrics?.paymentAttempt({ method: change.leg.method, route: change.leg.route, outcome, declineCode, livemode: change.payment.livemode });
  }

  return {
    deps,
    eventIds,
    routesOf: (livemode) => (livemode ? deps.liveRoutes : deps.testRoutes),
    processorOf: (route) => processors.get(route),
    merchantOf,
    merchantIn,
    inTransaction,
    releaseAfter,
    voidAll,
    expireIfDue,
    expire,
    claimLink,
    cancelChallenges,
    recordPaid,
    recordVoid,
    finishAuthorization,
    finishSuccess,
    finishFailure,
    dropHeldCard,
    counted,
    reverse,
  };
}
