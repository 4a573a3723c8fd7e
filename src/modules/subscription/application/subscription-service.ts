import { create, type DescMessage, type MessageInitShape, type MessageShape } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import {
  AdvanceTestClockRequestSchema,
  AdvanceTestClockResponseSchema,
  CancelSubscriptionRequestSchema,
  CancelSubscriptionResponseSchema,
  CreateSubscriptionRequestSchema,
  CreateSubscriptionResponseSchema,
  CreateTestClockRequestSchema,
  CreateTestClockResponseSchema,
  GetSubscriptionResponseSchema,
  GetTestClockResponseSchema,
  ListSubscriptionsResponseSchema,
  PauseSubscriptionRequestSchema,
  PauseSubscriptionResponseSchema,
  ResumeSubscriptionRequestSchema,
  ResumeSubscriptionResponseSchema,
  UpdateSubscriptionRequestSchema,
  UpdateSubscriptionResponseSchema,
  SubscriptionCycleSchema,
  SubscriptionSchema,
  TestClockSchema,
  type Subscription as ProtoSubscription,
  type SubscriptionService,
  type TestClock as ProtoTestClock,
  type TestClockService,
} from '../../../gen/checkout/v1/subscription_pb.ts';
import { EVENT_ID_PREFIX } from '../../event/domain/domain-event.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { validateCreateOrder } from '../../order/domain/create-order.ts';
import { invalid } from '../../../kernel/domain/domain-error.ts';
import { parseSchedule } from '../domain/schedule.ts';
import {
  assertAllowed,
  cancelAtPeriodEnd,
  cancelNow,
  changeCard,
  pause,
  resume,
  startSubscription,
  SUBSCRIPTION_ID_PREFIX,
  type AfterFailedRetries,
  type Subscription,
  type SubscriptionTransition,
} from '../domain/subscription.entity.ts';
import { checkAdvance, MAX_ADVANCING_CLOCKS_PER_MERCHANT, newTestClock, startAdvance, TEST_CLOCK_ID_PREFIX, type TestClock } from '../domain/test-clock.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { TransactionScope, UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { SubscriptionCycle, SubscriptionReader } from '../ports/subscription-repository.port.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../order/application/list-orders.ts';
import { ApplicationError } from '../../../kernel/application/application-error.ts';
import type { Billing } from './bill-subscriptions.ts';

/** The answer of a subscription's change: the subscription after it. */
type SubscriptionAnswer = typeof CancelSubscriptionResponseSchema | typeof PauseSubscriptionResponseSchema | typeof ResumeSubscriptionResponseSchema | typeof UpdateSubscriptionResponseSchema;

/** A subscription as the contracts carry it. */
export function subscriptionToProto(s: Subscription, cycles: readonly SubscriptionCycle[] = []): ProtoSubscription {
  return create(SubscriptionSchema, {
    id: s.id,
    customer: s.customerId,
    card: s.cardId,
    amount: s.amount,
    currency: s.currency,
    reference: s.reference,
    lineItems: s.lineItems.map((item) => ({ name: item.name, amount: item.amount })),
    interval: s.schedule.interval,
    intervalCount: s.schedule.intervalCount,
    startDate: timestampFromDate(s.schedule.startDate),
    trialDays: s.schedule.trialDays,
    cycles: s.schedule.cycles ?? undefined,
    afterFailedRetries: s.afterFailedRetries,
    status: s.status,
    nextCycle: s.nextCycle,
    nextChargeAt: s.nextChargeAt ? timestampFromDate(s.nextChargeAt) : undefined,
    retries: s.retries,
    cancelAtPeriodEnd: s.cancelAtPeriodEnd,
    canceledAt: s.canceledAt ? timestampFromDate(s.canceledAt) : undefined,
    cancellationReason: s.cancellationReason ?? undefined,
    testClock: s.testClockId ?? undefined,
    livemode: s.livemode,
    created: timestampFromDate(s.createdAt),
    chargedCycles: cycles.map((c) => create(SubscriptionCycleSchema, { cycle: c.cycle, orderId: c.orderId, charges: c.chargesStarted })),
  });
}

/** A test clock as the contracts carry it. */
export function testClockToProto(clock: TestClock): ProtoTestClock {
  return create(TestClockSchema, {
    id: clock.id,
    name: clock.name,
    frozenTime: timestampFromDate(clock.frozenTime),
    status: clock.status,
    targetFrozenTime: clock.targetFrozenTime ? timestampFromDate(clock.targetFrozenTime) : undefined,
    created: timestampFromDate(clock.createdAt),
  });
}

const AFTER_FAILED: readonly AfterFailedRetries[] = ['unpaid', 'cancel'];

interface Deps {
  readonly authenticate: Authenticate;
  readonly idempotent: Idempotent;
  readonly uow: UnitOfWork;
  readonly subscriptions: SubscriptionReader;
  readonly billing: Billing;
  readonly ids: IdGenerator;
  readonly clock: Clock;
}

/** The clock a subscription (or customer) runs on: its test clock's time, or the real one. */
async function clockOf(uow: UnitOfWork, merchantId: string, testClockId: string | null | undefined, real: Clock): Promise<Clock> {
  if (!testClockId) return real;
  const clock = await uow.run((tx) => tx.testClocks.findById(merchantId, testClockId));
  const at = clock?.frozenTime ?? real.now();
  return { now: () => new Date(at.getTime()) };
}

/**
 * A subscription's test clock, locked until the transaction ends, when it is ready. While it advances,
 * no subscription on it starts or resumes billing: the advance's bound was set from the periods that
 * billed when it was asked for, and a shorter one joining would run more cycles than that bound allows.
 * @throws ApplicationError test_clock.busy while the clock advances
 */
async function clockAtRest(tx: TransactionScope, testClockId: string): Promise<TestClock | undefined> {
  const clock = await tx.testClocks.lock(testClockId);
  if (clock?.status === 'advancing') {
    throw new ApplicationError('test_clock.busy', `Test clock ${clock.id} is advancing; start or resume subscriptions on it once its status is ready.`);
  }
  return clock;
}

/** Implements checkout.v1.SubscriptionService. */
export function createSubscriptionService(deps: Deps): ServiceImpl<typeof SubscriptionService> {
  const secret = (ctx: HandlerContext) => deps.authenticate(ctx, 'secret');
  const eventIds = (now: Date) => ({ eventId: deps.ids.newId(EVENT_ID_PREFIX), now });

  async function answer(scope: Scope, id: string): Promise<ProtoSubscription> {
    const s = await deps.subscriptions.findById(scope, id);
    if (!s) throw new ApplicationError('subscription.not_found', `No such subscription: "${id}".`, 'id');
    return subscriptionToProto(s, await deps.subscriptions.cyclesOf(s.id));
  }

  async function locked(tx: TransactionScope, scope: Scope, id: string): Promise<Subscription> {
    const seen = await deps.subscriptions.findById(scope, id);
    const s = seen && (await tx.subscriptions.lock(seen.id));
    if (!s) throw new ApplicationError('subscription.not_found', `No such subscription: "${id}".`, 'id');
    return s;
  }

  /** Charges what is due now (a subscription whose first cycle is due at once, or after a resume), then answers it as it stands. */
  async function chargeAndAnswer(scope: Scope, s: Subscription): Promise<ProtoSubscription> {
    const clock = await clockOf(deps.uow, s.merchantId, s.testClockId, deps.clock);
    await deps.billing.chargeDue(s.id, clock);
    return answer(scope, s.id);
  }

  /**
   * One change of a subscription, with Idempotency-Key: under its lock, at its clock's time, `decide`
   * answers the transition (none: nothing changes), stored with its event. The answer stored with
   * the key is the subscription after it.
   */
  async function change<I extends DescMessage, O extends SubscriptionAnswer>(
    ctx: HandlerContext,
    caller: Scope,
    call: { readonly operation: string; readonly input: I; readonly request: MessageShape<I>; readonly output: O },
    id: string,
    decide: (tx: TransactionScope, s: Subscription, now: Date) => Promise<SubscriptionTransition | undefined>,
  ): Promise<void> {
    await deps.idempotent(ctx, caller, call, async (tx) => {
      const s = await locked(tx, caller, id);
      const now = (await clockOf(deps.uow, s.merchantId, s.testClockId, deps.clock)).now();
      const t = await decide(tx, s, now);
      if (t) {
        await tx.subscriptions.save(t.subscription);
        await tx.outbox.append(t.event);
      }
      return create(call.output, { subscription: subscriptionToProto(t?.subscription ?? s) } as MessageInitShape<O>);
    });
  }

  return {
    createSubscription: async (req, ctx) => {
      const caller = await secret(ctx);
      const call = { operation: 'subscriptions.create', input: CreateSubscriptionRequestSchema, request: req, output: CreateSubscriptionResponseSchema };
      const made = await deps.idempotent(ctx, caller, call, async (tx) => {
        if (req.customer === '') throw invalid('request.parameter_missing', 'customer', 'customer is required: the customer (cus_…) whose saved card is charged.');
        if (req.card === '') throw invalid('request.parameter_missing', 'card', 'card is required: a saved card (card_…) of the customer.');
        const customer = req.customer.startsWith('cus_') ? await tx.customers.lock(caller, req.customer) : undefined;
        if (!customer) throw new ApplicationError('order.customer_unknown', `No such customer: "${req.customer.slice(0, 60)}".`, 'customer');
        const card = req.card.startsWith('card_') ? await tx.vault.findCard(caller, customer.id, req.card) : undefined;
        if (!card) throw new ApplicationError('order.card_unknown', `No such card for customer ${customer.id}: "${req.card.slice(0, 60)}".`, 'card');
        // A customer on a test clock bills on the clock's time; not while it advances (see clockAtRest).
        const clock = customer.testClockId ? await clockAtRest(tx, customer.testClockId) : undefined;
        const now = clock?.frozenTime ?? deps.clock.now();
        const order = validateCreateOrder(
          { amount: req.amount, currency: req.currency, reference: req.reference, lineItems: req.lineItems.map((item) => ({ name: item.name, amount: item.amount })), returnUrl: undefined, expiresAt: undefined },
          now,
        );
        const schedule = parseSchedule(
          { interval: req.interval, intervalCount: req.intervalCount, startDate: req.startDate ? timestampDate(req.startDate) : undefined, trialDays: req.trialDays, cycles: req.cycles },
          now,
        );
        const afterFailedRetries = (req.afterFailedRetries ?? 'unpaid') as AfterFailedRetries;
        if (!AFTER_FAILED.includes(afterFailedRetries)) throw invalid('request.parameter_invalid', 'after_failed_retries', 'after_failed_retries must be "unpaid" or "cancel".');
        const t = startSubscription(
          {
            id: deps.ids.newId(SUBSCRIPTION_ID_PREFIX),
            merchantId: caller.merchantId,
            livemode: caller.livemode,
            customerId: customer.id,
            cardId: card.id,
            amount: order.amount,
            currency: order.currency,
            reference: order.reference,
            lineItems: order.lineItems,
            schedule,
            afterFailedRetries,
            testClockId: clock?.id ?? null,
          },
          eventIds(now),
        );
        await tx.subscriptions.insert(t.subscription);
        await tx.outbox.append(t.event);
        return create(CreateSubscriptionResponseSchema, { subscription: subscriptionToProto(t.subscription) });
      });
      const s = await deps.subscriptions.findById(caller, made.subscription!.id);
      return create(CreateSubscriptionResponseSchema, { subscription: s ? await chargeAndAnswer(caller, s) : made.subscription });
    },

    getSubscription: async (req, ctx) => create(GetSubscriptionResponseSchema, { subscription: await answer(await secret(ctx), req.id) }),

    listSubscriptions: async (req, ctx) => {
      const caller = await secret(ctx);
      const limit = req.limit === 0 ? DEFAULT_LIST_LIMIT : req.limit;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) throw new ApplicationError('list.limit_invalid', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, 'limit');
      const page = await deps.subscriptions.list(caller, { limit, startingAfter: req.startingAfter, customerId: req.customer });
      return create(ListSubscriptionsResponseSchema, { subscriptions: page.subscriptions.map((s) => subscriptionToProto(s)), hasMore: page.hasMore });
    },

    updateSubscription: async (req, ctx) => {
      const caller = await secret(ctx);
      await change(ctx, caller, { operation: 'subscriptions.update', input: UpdateSubscriptionRequestSchema, request: req, output: UpdateSubscriptionResponseSchema }, req.id, async (tx, s, now) => {
        if (req.card === undefined) return undefined;
        const card = req.card.startsWith('card_') ? await tx.vault.findCard(caller, s.customerId, req.card) : undefined;
        if (!card) throw new ApplicationError('order.card_unknown', `No such card for customer ${s.customerId}: "${req.card.slice(0, 60)}".`, 'card');
        return changeCard(s, card.id, eventIds(now));
      });
      return create(UpdateSubscriptionResponseSchema, { subscription: await answer(caller, req.id) });
    },

    cancelSubscription: async (req, ctx) => {
      const caller = await secret(ctx);
      await change(ctx, caller, { operation: 'subscriptions.cancel', input: CancelSubscriptionRequestSchema, request: req, output: CancelSubscriptionResponseSchema }, req.id, async (_tx, s, now) => {
        assertAllowed(s, 'cancel');
        return req.atPeriodEnd && s.status !== 'paused' && s.status !== 'unpaid' ? cancelAtPeriodEnd(s, eventIds(now)) : cancelNow(s, 'requested', eventIds(now));
      });
      return create(CancelSubscriptionResponseSchema, { subscription: await answer(caller, req.id) });
    },

    pauseSubscription: async (req, ctx) => {
      const caller = await secret(ctx);
      await change(ctx, caller, { operation: 'subscriptions.pause', input: PauseSubscriptionRequestSchema, request: req, output: PauseSubscriptionResponseSchema }, req.id, async (_tx, s, now) => {
        assertAllowed(s, 'pause');
        return pause(s, eventIds(now));
      });
      return create(PauseSubscriptionResponseSchema, { subscription: await answer(caller, req.id) });
    },

    resumeSubscription: async (req, ctx) => {
      const caller = await secret(ctx);
      await change(ctx, caller, { operation: 'subscriptions.resume', input: ResumeSubscriptionRequestSchema, request: req, output: ResumeSubscriptionResponseSchema }, req.id, async (tx, s, now) => {
        assertAllowed(s, 'resume');
        if (s.testClockId) await clockAtRest(tx, s.testClockId);
        return resume(s, eventIds(now));
      });
      const s = await deps.subscriptions.findById(caller, req.id);
      return create(ResumeSubscriptionResponseSchema, { subscription: s ? await chargeAndAnswer(caller, s) : await answer(caller, req.id) });
    },
  };
}

/** Implements checkout.v1.TestClockService: test secret keys only. */
export function createTestClockService(deps: Deps): ServiceImpl<typeof TestClockService> {
  async function testCaller(ctx: HandlerContext) {
    const caller = await deps.authenticate(ctx, 'secret');
    if (caller.livemode) throw new ApplicationError('test_helpers.live_mode', 'Test clocks are test mode only; use a sk_test_ key.');
    return caller;
  }
  async function found(merchantId: string, id: string): Promise<TestClock> {
    const clock = await deps.uow.run((tx) => tx.testClocks.findById(merchantId, id));
    if (!clock) throw new ApplicationError('test_clock.not_found', `No such test clock: "${id}".`, 'id');
    return clock;
  }

  return {
    createTestClock: async (req, ctx) => {
      const caller = await testCaller(ctx);
      const call = { operation: 'test_clocks.create', input: CreateTestClockRequestSchema, request: req, output: CreateTestClockResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx) => {
        const clock = newTestClock({ id: deps.ids.newId(TEST_CLOCK_ID_PREFIX), merchantId: caller.merchantId, name: req.name || undefined, frozenTime: req.frozenTime ? timestampDate(req.frozenTime) : undefined }, deps.clock.now());
        await tx.testClocks.insert(clock);
        return create(CreateTestClockResponseSchema, { testClock: testClockToProto(clock) });
      });
    },

    getTestClock: async (req, ctx) => create(GetTestClockResponseSchema, { testClock: testClockToProto(await found((await testCaller(ctx)).merchantId, req.id)) }),

    advanceTestClock: async (req, ctx) => {
      const caller = await testCaller(ctx);
      const clock = await found(caller.merchantId, req.id);
      if (!req.to) throw invalid('request.parameter_missing', 'to', 'to is required: the time to advance the clock to.');
      const to = timestampDate(req.to);
      // Only recorded here (once per Idempotency-Key): the biller runs what is due on the way, in bounded steps (advance-test-clocks.ts).
      const call = { operation: 'test_clocks.advance', input: AdvanceTestClockRequestSchema, request: req, output: AdvanceTestClockResponseSchema };
      return deps.idempotent(ctx, caller, call, async (tx) => {
        const advancing = await tx.testClocks.advancingOf(caller.merchantId);
        // One advance of a clock at a time: the clock is marked advancing under its lock.
        const current = await tx.testClocks.lock(clock.id);
        if (!current) throw new ApplicationError('test_clock.not_found', `No such test clock: "${req.id}".`, 'id');
        if (current.status === 'advancing') {
          throw new ApplicationError('test_clock.busy', `Test clock ${current.id} is advancing already (to ${current.targetFrozenTime?.toISOString()}); advance it again once its status is ready.`, 'id');
        }
        // Read under the clock's lock: a subscription starting on it meanwhile waits for it (clockAtRest).
        checkAdvance(current, to, await tx.testClocks.billingIntervals(current.id));
        if (advancing.length >= MAX_ADVANCING_CLOCKS_PER_MERCHANT) {
          throw new ApplicationError(
            'test_clock.too_many_advancing',
            `${advancing.length} of your test clocks are advancing already (${advancing.join(', ')}); at most ${MAX_ADVANCING_CLOCKS_PER_MERCHANT} advance at once. Advance this one once one of them is ready.`,
            'id',
          );
        }
        const next = startAdvance(current, to, deps.clock.now());
        await tx.testClocks.save(next);
        return create(AdvanceTestClockResponseSchema, { testClock: testClockToProto(next) });
      });
    },
  };
}
