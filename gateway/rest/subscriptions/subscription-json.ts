import type { Subscription, TestClock } from '../../../src/gen/checkout/v1/subscription_pb.ts';
import { isoOrNull } from '../shared/time-json.ts';

/** A subscription as the REST API shows it. */
export function subscriptionJson(s: Subscription) {
  return {
    id: s.id,
    object: 'subscription' as const,
    customer: s.customer,
    card: s.card,
    amount: Number(s.amount),
    currency: s.currency,
    reference: s.reference,
    line_items: s.lineItems.map((item) => ({ name: item.name, amount: Number(item.amount) })),
    interval: s.interval,
    interval_count: s.intervalCount,
    start_date: isoOrNull(s.startDate),
    trial_days: s.trialDays,
    cycles: s.cycles ?? null,
    after_failed_retries: s.afterFailedRetries,
    status: s.status,
    next_cycle: s.nextCycle,
    next_charge_at: isoOrNull(s.nextChargeAt),
    retries: s.retries,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    canceled_at: isoOrNull(s.canceledAt),
    cancellation_reason: s.cancellationReason ?? null,
    test_clock: s.testClock ?? null,
    livemode: s.livemode,
    created: isoOrNull(s.created),
    charged_cycles: s.chargedCycles.map((c) => ({ cycle: c.cycle, order: c.orderId, charges: c.charges })),
  };
}

/** A test clock as the REST API shows it. */
export function testClockJson(clock: TestClock) {
  return {
    id: clock.id,
    object: 'test_clock' as const,
    name: clock.name,
    frozen_time: isoOrNull(clock.frozenTime),
    status: clock.status,
    target_frozen_time: isoOrNull(clock.targetFrozenTime),
    created: isoOrNull(clock.created),
  };
}
