import { RESERVED_KEY_PREFIX } from '../../../kernel/application/idempotency-key.ts';
import { EVENT_ID_PREFIX, orderEventData } from '../../event/domain/domain-event.ts';
import { createOrder } from '../../order/domain/create-order.ts';
import { isPaid } from '../../order/domain/order-transitions.ts';
import { ORDER_ID_PREFIX, type Order } from '../../order/domain/order.entity.ts';
import { cancelNow, endsBeforeNextCycle, isDue, noteCharged, noteChargeFailed, type Subscription, type SubscriptionTransition } from '../domain/subscription.entity.ts';
import type { MerchantReader } from '../../merchant/ports/merchant-repository.port.ts';
import type { OrderCreationStore } from '../../order/ports/order-creation-store.port.ts';
import type { PaymentRepository } from '../../payment/ports/payment-repository.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { TransactionScope, UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { SubscriptionReader } from '../ports/subscription-repository.port.ts';
import type { PayOrder } from '../../payment/application/pay-order.ts';
import type { CardVaultUseCases } from '../../customer/application/card-vault-use-cases.ts';

/** What one charge attempt of a subscription came to. */
export type ChargeResult = 'charged' | 'failed' | 'canceled' | 'pending' | 'not_due';

/** Charges subscriptions: the scheduler's tick on the real time, and one subscription at a test clock's time. */
export interface Billing {
  /**
   * Charges what is due of one subscription at `clock`'s time, exactly once: the cycle's order is
   * made once (its idempotency key and the (subscription, cycle) key decide), a charge is counted as
   * started before the acquirer is asked, and its outcome is taken in once. A run that finds a charge
   * started and not taken in (a crash between the charge and its bookkeeping, or another scheduler
   * at work) takes the order's outcome in instead of charging again.
   */
  chargeDue(subscriptionId: string, clock: Clock): Promise<ChargeResult>;
  /** The scheduler's tick: every subscription on the real time with a charge due, soonest first; answers how many it charged. */
  runDue(limit: number): Promise<number>;
}

/** How long a biller holds the subscriptions it took before another may take them. */
export const BILLING_LEASE_MS = 60_000;

/** How long a counted charge may go without its payment beginning before it is taken for one that never will. */
export const STALE_CHARGE_MS = 120_000;

/** How long a cycle's order can be paid: through the dunning retries (5 days) and then some. */
export const CYCLE_ORDER_VALIDITY_MS = 7 * 86_400_000;

const CYCLE_OPERATION = 'subscriptions.cycle';

/** The idempotency key that makes a cycle's order once (reserved: merchants' keys are of their own requests). */
export function cycleOrderKey(subscriptionId: string, cycle: number): string {
  return `${RESERVED_KEY_PREFIX}${subscriptionId}:${cycle}`;
}

/** Creates the billing over the payment engine (at a given clock, for test clocks), the vault and the order store. */
export function createBilling(deps: {
  readonly uow: UnitOfWork;
  readonly subscriptions: SubscriptionReader;
  readonly orderStore: OrderCreationStore;
  readonly merchants: MerchantReader;
  readonly payments: PaymentRepository;
  readonly vault: Pick<CardVaultUseCases, 'openCard'>;
  /** The payment engine running at `clock`'s time (the real clock, or a test clock's). */
  readonly payOrderAt: (clock: Clock) => PayOrder;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  readonly onBackgroundError: (err: unknown) => void;
}): Billing {
  const eventIdsAt = (clock: Clock) => () => ({ eventId: deps.ids.newId(EVENT_ID_PREFIX), now: clock.now() });

  async function store(tx: TransactionScope, transitions: readonly SubscriptionTransition[]): Promise<void> {
    if (transitions.length === 0) return;
    await tx.subscriptions.save(transitions[transitions.length - 1]!.subscription);
    for (const t of transitions) await tx.outbox.append(t.event);
  }

  /** The cycle's order, made once: a second maker (another scheduler) gets the first one's order. */
  async function cycleOrder(s: Subscription, cycle: number, clock: Clock): Promise<Order> {
    const merchant = await deps.merchants.findById(s.merchantId);
    if (!merchant) throw new Error(`merchant ${s.merchantId} of ${s.id} vanished`);
    const now = clock.now();
    const { order, event } = createOrder(
      { amount: s.amount, currency: s.currency, reference: s.reference, lineItems: s.lineItems, returnUrl: undefined, expiresAt: new Date(now.getTime() + CYCLE_ORDER_VALIDITY_MS), customerId: s.customerId },
      {
        orderId: deps.ids.newId(ORDER_ID_PREFIX),
        eventId: deps.ids.newId(EVENT_ID_PREFIX),
        merchantId: s.merchantId,
        livemode: s.livemode,
        checkoutHost: merchant.checkoutHost,
        checkoutToken: deps.ids.newSecret(''),
        now,
        subscription: { id: s.id, cycle },
      },
    );
    const claim = await deps.orderStore.create({ scope: s, key: cycleOrderKey(s.id, cycle), operation: CYCLE_OPERATION, fingerprint: '', order }, order, event);
    if (claim.claimed) return order;
    if (claim.existing.operation !== CYCLE_OPERATION) throw new Error(`the key of ${s.id} cycle ${cycle} is held by another operation (${claim.existing.operation})`);
    return claim.existing.order;
  }

  /**
   * Takes the outcome of the cycle's charges in, once; nothing while a charge is still processing or
   * about to begin. `noCard`: the charge found no saved card to charge (deleted), a failure of its own.
   */
  async function record(subscriptionId: string, clock: Clock, noCard = false): Promise<ChargeResult> {
    return deps.uow.run(async (tx) => {
      const s = await tx.subscriptions.lock(subscriptionId);
      if (!s) return 'not_due';
      const cycle = await tx.subscriptions.findCycle(s.id, s.nextCycle);
      if (!cycle || cycle.chargesStarted === cycle.chargesRecorded) return 'not_due';
      const order = await tx.orders.lock(cycle.orderId);
      if (!order) throw new Error(`order ${cycle.orderId} of ${s.id} cycle ${cycle.cycle} vanished`);
      const eventIds = eventIdsAt(clock);
      if (isPaid(order)) {
        await store(tx, noteCharged(s, cycle.cycle, { id: order.id, data: orderEventData(order), receiptUrl: order.checkoutUrl }, eventIds));
        await tx.subscriptions.noteChargesRecorded(s.id, cycle.cycle, cycle.chargesStarted);
        return 'charged';
      }
      const records = await tx.payments.listForOrder(order.id);
      const attempts = records.flatMap((p) => p.attempts);
      if (attempts.some((a) => a.status === 'processing' || a.status === 'requires_authentication' || a.status === 'reversal_pending')) return 'pending';
      const counted = records.filter((r) => r.payment.submissionId?.startsWith(`subscription_${s.id}_${cycle.cycle}_`) ?? false).length;
      if (counted < cycle.chargesStarted && !noCard) {
        // A counted charge whose payment has not begun: about to (another runner is at it), or never
        // will (its process stopped before it reached the engine). Past STALE_CHARGE_MS, it is
        // forgotten, and the next run charges again: nothing of it reached an acquirer.
        const startedAt = cycle.chargeStartedAt?.getTime() ?? 0;
        if (deps.clock.now().getTime() - startedAt > STALE_CHARGE_MS) await tx.subscriptions.noteChargesRecorded(s.id, cycle.cycle, cycle.chargesStarted);
        return 'pending';
      }
      const last = attempts.at(-1);
      const declineCode = noCard ? 'card_missing' : (last?.declineCode ?? null);
      await store(tx, noteChargeFailed(s, cycle.cycle, { orderId: order.id, declineCode }, eventIds));
      await tx.subscriptions.noteChargesRecorded(s.id, cycle.cycle, cycle.chargesStarted);
      return 'failed';
    });
  }

  const billing: Billing = {
    async chargeDue(subscriptionId, clock) {
      const now = clock.now();
      const eventIds = eventIdsAt(clock);
      // Decide under the subscription's lock (another scheduler holding it: skip, it is at work).
      const plan = await deps.uow.run(async (tx) => {
        const s = await tx.subscriptions.lock(subscriptionId, { skipLocked: true });
        if (!s || !isDue(s, now)) return { kind: 'not_due' as const };
        if (endsBeforeNextCycle(s)) {
          await store(tx, [cancelNow(s, 'requested', eventIds())]);
          return { kind: 'canceled' as const };
        }
        const cycle = await tx.subscriptions.findCycle(s.id, s.nextCycle);
        if (cycle && cycle.chargesStarted > cycle.chargesRecorded) return { kind: 'record' as const };
        return { kind: 'charge' as const, s, orderId: cycle?.orderId };
      });
      if (plan.kind === 'not_due' || plan.kind === 'canceled') return plan.kind;
      if (plan.kind === 'record') return record(subscriptionId, clock);

      const orderId = plan.orderId ?? (await cycleOrder(plan.s, plan.s.nextCycle, clock)).id;
      // Count the charge as started, under the lock: of two schedulers here at once, one charges.
      const started = await deps.uow.run(async (tx) => {
        const s = await tx.subscriptions.lock(subscriptionId);
        if (!s || !isDue(s, now) || s.nextCycle !== plan.s.nextCycle) return undefined;
        const cycle = await tx.subscriptions.addCycle({ subscriptionId: s.id, cycle: s.nextCycle, orderId }, now);
        if (cycle.chargesStarted > cycle.chargesRecorded) return undefined;
        await tx.subscriptions.noteChargeStarted(s.id, cycle.cycle, deps.clock.now());
        return { s, cycle: cycle.cycle, attempt: cycle.chargesStarted + 1, orderId: cycle.orderId };
      });
      if (!started) return 'pending';

      const { s } = started;
      let noCard = false;
      try {
        const opened = await deps.vault.openCard(s, s.customerId, s.cardId);
        noCard = !opened;
        if (opened) {
          await deps.payOrderAt(clock)({
            orderId: started.orderId,
            authorize: (locked) => {
              if (locked.merchantId !== s.merchantId || locked.livemode !== s.livemode) throw new Error(`order ${locked.id} is not ${s.id}'s`);
            },
            // One submission per charge of the cycle: a repeat of this one charges nothing more.
            submissionId: `subscription_${s.id}_${started.cycle}_${started.attempt}`,
            instrument: { method: 'card', card: opened.card, saved: { cardId: opened.saved.id, offSession: true } },
            client: { address: undefined },
          });
        }
      } catch (err) {
        // The engine refused (the order expired, a payment in progress): the outcome is read from the order below.
        deps.onBackgroundError(err);
      }
      return record(subscriptionId, clock, noCard);
    },

    async runDue(limit) {
      const now = deps.clock.now();
      let charged = 0;
      for (const id of await deps.subscriptions.claimDue(now, new Date(now.getTime() + BILLING_LEASE_MS), limit)) {
        try {
          if ((await billing.chargeDue(id, deps.clock)) === 'charged') charged++;
        } catch (err) {
          deps.onBackgroundError(err);
        }
      }
      return charged;
    },
  };
  return billing;
}
