import type { DomainEvent, JsonValue } from '../../event/domain/domain-event.ts';
import { invalid } from '../../../kernel/domain/domain-error.ts';
import { addMonths, type Interval } from './schedule.ts';

// Test clocks: test mode's own time, so that a year of billing runs in seconds. docs/recurring.md.

/** Prefix of every test clock id. */
export const TEST_CLOCK_ID_PREFIX = 'clock_';

/**
 * ready between advances; advancing from the advance request until the biller has run everything due
 * up to the target time (a second advance of the clock is refused meanwhile).
 */
export type TestClockStatus = 'ready' | 'advancing';

/** A test-mode clock that customers (and their subscriptions) are attached to. */
export interface TestClock {
  readonly id: string;
  readonly merchantId: string;
  readonly name: string;
  /** The clock's time: it only moves when advanced, and steps towards the target while advancing. */
  readonly frozenTime: Date;
  readonly status: TestClockStatus;
  /** Where the running advance goes; null when ready. */
  readonly targetFrozenTime: Date | null;
  /** When the running advance was asked for (the real time); null when ready. */
  readonly advancingSince: Date | null;
  /**
   * Until when a biller holds the clock (the real time); after that any biller may take it. Null
   * before its first step; the time of its last step once a biller has let it go.
   */
  readonly leaseUntil: Date | null;
  /** Counts the clock's changes of status: the sequence of its events. */
  readonly version: number;
  readonly createdAt: Date;
}

/** The most test clocks of one merchant advancing at once: further advances wait for one to be ready. */
export const MAX_ADVANCING_CLOCKS_PER_MERCHANT = 5;

/** How far a clock on which no subscription bills may advance at once: two years, as Stripe's. */
export const MAX_ADVANCE_MONTHS_WITHOUT_SUBSCRIPTIONS = 24;

/** The furthest ahead a clock may start (five years). */
const MAX_START_AHEAD_MS = 5 * 366 * 86_400_000;

/**
 * Checks a clock's name and start time: a name of at most 100 characters, a start from now to five
 * years ahead (now when absent).
 * @throws DomainError test_clock.invalid
 */
export function newTestClock(input: { readonly id: string; readonly merchantId: string; readonly name: string | undefined; readonly frozenTime: Date | undefined }, now: Date): TestClock {
  const name = input.name ?? '';
  if ([...name].length > 100 || name.includes('\u0000') || !name.isWellFormed()) throw invalid('test_clock.invalid', 'name', 'name must be text of at most 100 characters.');
  const frozenTime = input.frozenTime ?? now;
  // Not in the past: orders made on the clock would otherwise expire on the real time before the clock reached them.
  if (Number.isNaN(frozenTime.getTime()) || frozenTime.getTime() < now.getTime() - 60_000 || frozenTime.getTime() - now.getTime() > MAX_START_AHEAD_MS) {
    throw invalid('test_clock.invalid', 'frozen_time', 'frozen_time must be from now to five years ahead.');
  }
  return {
    id: input.id,
    merchantId: input.merchantId,
    name,
    frozenTime: new Date(frozenTime.getTime()),
    status: 'ready',
    targetFrozenTime: null,
    advancingSince: null,
    leaseUntil: null,
    version: 0,
    createdAt: now,
  };
}

/** A subscription's period: `count` of `interval`. */
export interface BillingInterval {
  readonly interval: Interval;
  readonly count: number;
}

/** A period's length in days, near enough to compare periods (a month as 30.44 days). */
function approximateDays(period: BillingInterval): number {
  const days: { readonly [I in Interval]: number } = { day: 1, week: 7, month: 30.44, year: 365.25 };
  return days[period.interval] * period.count;
}

/** `from` moved on by `times` periods, in calendar terms (31 January + two months is 31 March). */
function addPeriods(from: Date, period: BillingInterval, times: number): Date {
  switch (period.interval) {
    case 'day':
      return new Date(from.getTime() + times * period.count * 86_400_000);
    case 'week':
      return new Date(from.getTime() + times * period.count * 7 * 86_400_000);
    case 'month':
      return addMonths(from, times * period.count);
    case 'year':
      return addMonths(from, times * period.count * 12);
  }
}

/** How a period reads in a message: "1 day", "3 months". */
function describe(period: BillingInterval): string {
  return `${period.count} ${period.interval}${period.count === 1 ? '' : 's'}`;
}

/**
 * The furthest one advance of `clock` may go, after Stripe's rule: two periods of the shortest
 * subscription billing on it (two days for a daily one, two months for a monthly one), or two years
 * when none bills. Each advance so runs a bounded number of cycles per subscription.
 */
export function advanceLimit(clock: Pick<TestClock, 'frozenTime'>, billing: readonly BillingInterval[]): { readonly limit: Date; readonly rule: string } {
  const shortest = billing.reduce<BillingInterval | undefined>((best, period) => (best === undefined || approximateDays(period) < approximateDays(best) ? period : best), undefined);
  if (!shortest) return { limit: addMonths(clock.frozenTime, MAX_ADVANCE_MONTHS_WITHOUT_SUBSCRIPTIONS), rule: 'two years when no subscription bills on it' };
  return { limit: addPeriods(clock.frozenTime, shortest, 2), rule: `two periods of its shortest subscription (${describe(shortest)})` };
}

/**
 * Checks an advance: forward only, at most {@link advanceLimit} at once.
 * @throws DomainError test_clock.invalid
 */
export function checkAdvance(clock: TestClock, to: Date, billing: readonly BillingInterval[]): void {
  if (Number.isNaN(to.getTime()) || to.getTime() <= clock.frozenTime.getTime()) {
    throw invalid('test_clock.invalid', 'to', `to must be later than the clock's time (${clock.frozenTime.toISOString()}): a test clock only moves forward.`);
  }
  const { limit, rule } = advanceLimit(clock, billing);
  if (to.getTime() > limit.getTime()) {
    throw invalid('test_clock.invalid', 'to', `A test clock advances at most ${rule} at once: to must be at most ${limit.toISOString()}. Advance again once it is ready.`);
  }
}

/** The clock advancing towards `to`, asked at the real time `now`: the biller takes it from here. */
export function startAdvance(clock: TestClock, to: Date, now: Date): TestClock {
  return { ...clock, status: 'advancing', targetFrozenTime: new Date(to.getTime()), advancingSince: now, leaseUntil: null, version: clock.version + 1 };
}

/** The public shape of a test clock inside event data. */
export function testClockEventData(clock: TestClock): { [key: string]: JsonValue } {
  return {
    id: clock.id,
    name: clock.name,
    frozen_time: clock.frozenTime.toISOString(),
    status: clock.status,
    target_frozen_time: clock.targetFrozenTime?.toISOString() ?? null,
    livemode: false,
  };
}

/**
 * The advance is done: everything due up to the target has run, and the clock stands at the target,
 * ready, with test_clock.ready.
 * @throws Error when the clock is not advancing (a caller's mistake)
 */
export function finishAdvance(clock: TestClock, ids: { readonly eventId: string; readonly now: Date }): { readonly clock: TestClock; readonly event: DomainEvent } {
  if (clock.status !== 'advancing' || clock.targetFrozenTime === null) throw new Error(`test clock ${clock.id} is not advancing`);
  const next: TestClock = { ...clock, status: 'ready', frozenTime: clock.targetFrozenTime, targetFrozenTime: null, advancingSince: null, leaseUntil: null, version: clock.version + 1 };
  return {
    clock: next,
    event: {
      id: ids.eventId,
      type: 'test_clock.ready',
      merchantId: next.merchantId,
      livemode: false,
      subject: { type: 'test_clock', id: next.id },
      orderId: null,
      reference: null,
      sequence: next.version,
      createdAt: ids.now,
      data: testClockEventData(next),
    },
  };
}
