import { invalid } from '../shared/domain-error.ts';

// Test clocks: test mode's own time, so that a year of billing runs in seconds. docs/recurring.md.

/** Prefix of every test clock id. */
export const TEST_CLOCK_ID_PREFIX = 'clock_';

/** ready between advances; advancing while one runs (a second advance waits for it). */
export type TestClockStatus = 'ready' | 'advancing';

/** A test-mode clock that customers (and their subscriptions) are attached to. */
export interface TestClock {
  readonly id: string;
  readonly merchantId: string;
  readonly name: string;
  /** The clock's time: it only moves when advanced. */
  readonly frozenTime: Date;
  readonly status: TestClockStatus;
  /** When the running advance began (the real time); null when ready. */
  readonly advancingSince?: Date | null;
  readonly createdAt: Date;
}

/** An advance running longer than this is taken for one a stopped process left, and may be taken over. */
export const STALE_ADVANCE_MS = 10 * 60_000;

/** The furthest one advance may go (five years): each cycle on the way is run, so the work is bounded. */
export const MAX_ADVANCE_MS = 5 * 366 * 86_400_000;

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
  if (Number.isNaN(frozenTime.getTime()) || frozenTime.getTime() < now.getTime() - 60_000 || frozenTime.getTime() - now.getTime() > MAX_ADVANCE_MS) {
    throw invalid('test_clock.invalid', 'frozen_time', 'frozen_time must be from now to five years ahead.');
  }
  return { id: input.id, merchantId: input.merchantId, name, frozenTime: new Date(frozenTime.getTime()), status: 'ready', createdAt: now };
}

/**
 * Checks an advance: forward only, at most five years at once.
 * @throws DomainError test_clock.invalid
 */
export function checkAdvance(clock: TestClock, to: Date): void {
  if (Number.isNaN(to.getTime()) || to.getTime() <= clock.frozenTime.getTime()) {
    throw invalid('test_clock.invalid', 'to', `to must be later than the clock's time (${clock.frozenTime.toISOString()}): a test clock only moves forward.`);
  }
  if (to.getTime() - clock.frozenTime.getTime() > MAX_ADVANCE_MS) throw invalid('test_clock.invalid', 'to', 'A test clock advances at most five years at once.');
}
