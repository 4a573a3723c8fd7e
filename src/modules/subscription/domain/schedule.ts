import { invalid } from '../../../kernel/domain/domain-error.ts';

// When a subscription charges: cycle by cycle from its billing anchor, in UTC. docs/recurring.md.

/** The unit of a subscription's period. */
export type Interval = 'day' | 'week' | 'month' | 'year';

export const INTERVALS: readonly Interval[] = ['day', 'week', 'month', 'year'];

/** How often, from when, with what trial, and for how many cycles. */
export interface Schedule {
  readonly interval: Interval;
  /** Periods of `interval` per cycle: 3 months is interval month, count 3. */
  readonly intervalCount: number;
  /** When the subscription starts (its trial, if any, begins then). */
  readonly startDate: Date;
  /** Days of trial before the first charge. */
  readonly trialDays: number;
  /** Stop after this many charged cycles; null: until canceled. */
  readonly cycles: number | null;
}

/** The longest a cycle may be, per interval (a year, as Stripe allows). */
const MAX_COUNT: { readonly [I in Interval]: number } = { day: 365, week: 52, month: 12, year: 1 };

/** The longest trial, in days (two years). */
export const MAX_TRIAL_DAYS = 730;

/** The most cycles a subscription may be limited to. */
export const MAX_CYCLES = 1000;

/** How far ahead a start date may be set (five years). */
const MAX_START_AHEAD_MS = 5 * 366 * 86_400_000;

/** What a merchant sends. */
export interface ScheduleInput {
  readonly interval: string;
  readonly intervalCount: number | undefined;
  readonly startDate: Date | undefined;
  readonly trialDays: number | undefined;
  readonly cycles: number | undefined;
}

/**
 * Checks a schedule as sent: a known interval, a count that keeps a cycle to a year at most, a start
 * that is not in the past (a minute's leeway) nor more than five years ahead, a trial of at most two
 * years, and a cycle limit from 1 to 1000.
 * @throws DomainError subscription.schedule_invalid naming the parameter at fault
 */
export function parseSchedule(input: ScheduleInput, now: Date): Schedule {
  if (!(INTERVALS as readonly string[]).includes(input.interval)) {
    throw invalid('subscription.schedule_invalid', 'interval', `interval must be one of ${INTERVALS.join(', ')}.`);
  }
  const interval = input.interval as Interval;
  const intervalCount = input.intervalCount ?? 1;
  if (!Number.isInteger(intervalCount) || intervalCount < 1 || intervalCount > MAX_COUNT[interval]) {
    const range = MAX_COUNT[interval] === 1 ? 'be 1' : `be an integer from 1 to ${MAX_COUNT[interval]}`;
    throw invalid('subscription.schedule_invalid', 'interval_count', `interval_count must ${range} for interval ${interval}: a cycle is at most a year.`);
  }
  const startDate = input.startDate ?? now;
  if (Number.isNaN(startDate.getTime()) || startDate.getTime() < now.getTime() - 60_000) {
    throw invalid('subscription.schedule_invalid', 'start_date', 'start_date must not be in the past.');
  }
  if (startDate.getTime() > now.getTime() + MAX_START_AHEAD_MS) {
    throw invalid('subscription.schedule_invalid', 'start_date', 'start_date must be within five years.');
  }
  const trialDays = input.trialDays ?? 0;
  if (!Number.isInteger(trialDays) || trialDays < 0 || trialDays > MAX_TRIAL_DAYS) {
    throw invalid('subscription.schedule_invalid', 'trial_days', `trial_days must be an integer from 0 to ${MAX_TRIAL_DAYS}.`);
  }
  const cycles = input.cycles ?? null;
  if (cycles !== null && (!Number.isInteger(cycles) || cycles < 1 || cycles > MAX_CYCLES)) {
    throw invalid('subscription.schedule_invalid', 'cycles', `cycles must be an integer from 1 to ${MAX_CYCLES}, or omitted to charge until canceled.`);
  }
  return { interval, intervalCount, startDate: new Date(startDate.getTime()), trialDays, cycles };
}

/** The days in a month (month 0-11) of a year, in the Gregorian calendar. */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/**
 * `anchor` moved by `months` calendar months, keeping its day of the month where the month has it
 * and the month's last day where it does not: 31 January + 1 is 28 (or 29) February, + 2 is
 * 31 March. The time of day is kept.
 */
export function addMonths(anchor: Date, months: number): Date {
  const totalMonths = anchor.getUTCFullYear() * 12 + anchor.getUTCMonth() + months;
  const year = Math.floor(totalMonths / 12);
  const month = totalMonths - year * 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()));
}

/** When the first cycle is charged: the start, after the trial. */
export function billingAnchor(schedule: Pick<Schedule, 'startDate' | 'trialDays'>): Date {
  return new Date(schedule.startDate.getTime() + schedule.trialDays * 86_400_000);
}

/**
 * When cycle `cycle` (1, 2, …) is due. Every cycle is counted from the billing anchor, never from
 * the cycle before, so a short month does not shift the cycles after it.
 */
export function cycleDueAt(schedule: Schedule, cycle: number): Date {
  if (!Number.isInteger(cycle) || cycle < 1) throw new Error(`cycle ${cycle} is not a cycle number`);
  const anchor = billingAnchor(schedule);
  const periods = (cycle - 1) * schedule.intervalCount;
  switch (schedule.interval) {
    case 'day':
      return new Date(anchor.getTime() + periods * 86_400_000);
    case 'week':
      return new Date(anchor.getTime() + periods * 7 * 86_400_000);
    case 'month':
      return addMonths(anchor, periods);
    case 'year':
      return addMonths(anchor, periods * 12);
  }
}

/** True when the schedule has no cycle after `cycle`. */
export function isLastCycle(schedule: Pick<Schedule, 'cycles'>, cycle: number): boolean {
  return schedule.cycles !== null && cycle >= schedule.cycles;
}

/**
 * The dunning schedule: after a cycle's charge fails, it is tried again this many days after the
 * first failure, one retry per entry (Stripe's smart retries are not modelled; these are fixed).
 */
export const DUNNING_DAYS: readonly number[] = [1, 3, 5];

/** When retry `retry` (1, 2, …) of a cycle whose first charge failed at `firstFailure` is due; null when the retries are spent. */
export function retryDueAt(firstFailure: Date, retry: number): Date | null {
  const days = DUNNING_DAYS[retry - 1];
  return days === undefined ? null : new Date(firstFailure.getTime() + days * 86_400_000);
}
