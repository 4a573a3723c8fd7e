import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { addMonths, billingAnchor, cycleDueAt, isLastCycle, parseSchedule, retryDueAt, type Schedule } from './schedule.ts';

const NOW = new Date('2027-01-31T09:30:00.000Z');
const iso = (d: Date | null) => d?.toISOString() ?? null;
const schedule = (overrides: Partial<Schedule> = {}): Schedule => ({ interval: 'month', intervalCount: 1, startDate: NOW, trialDays: 0, cycles: null, ...overrides });
const paramOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof DomainError ? `${err.code} ${err.param}` : String(err);
  }
};

describe('month arithmetic', () => {
  it('keeps the anchor day where the month has it, and the last day where it does not', () => {
    const jan31 = new Date('2027-01-31T09:30:00.000Z');
    expect([1, 2, 3, 4].map((m) => iso(addMonths(jan31, m)))).toEqual([
      '2027-02-28T09:30:00.000Z',
      '2027-03-31T09:30:00.000Z',
      '2027-04-30T09:30:00.000Z',
      '2027-05-31T09:30:00.000Z',
    ]);
    // A leap year's February has its 29th.
    expect(iso(addMonths(new Date('2028-01-31T00:00:00.000Z'), 1))).toBe('2028-02-29T00:00:00.000Z');
    // Across years, and backwards.
    expect(iso(addMonths(new Date('2027-11-30T12:00:00.000Z'), 3))).toBe('2028-02-29T12:00:00.000Z');
    expect(iso(addMonths(new Date('2027-03-31T12:00:00.000Z'), -1))).toBe('2027-02-28T12:00:00.000Z');
  });

  it('counts every cycle from the anchor, so a short month does not shift the cycles after it', () => {
    const s = schedule();
    expect([1, 2, 3, 13].map((c) => iso(cycleDueAt(s, c)))).toEqual(['2027-01-31T09:30:00.000Z', '2027-02-28T09:30:00.000Z', '2027-03-31T09:30:00.000Z', '2028-01-31T09:30:00.000Z']);
  });

  it('charges a 29 February anchor on 28 February in the years without one', () => {
    const s = schedule({ interval: 'year', startDate: new Date('2028-02-29T08:00:00.000Z') });
    expect([1, 2, 5].map((c) => iso(cycleDueAt(s, c)))).toEqual(['2028-02-29T08:00:00.000Z', '2029-02-28T08:00:00.000Z', '2032-02-29T08:00:00.000Z']);
  });

  it('days, weeks, quarters; a trial moves the anchor', () => {
    expect(iso(cycleDueAt(schedule({ interval: 'day', intervalCount: 10 }), 3))).toBe('2027-02-20T09:30:00.000Z');
    expect(iso(cycleDueAt(schedule({ interval: 'week', intervalCount: 2 }), 2))).toBe('2027-02-14T09:30:00.000Z');
    expect(iso(cycleDueAt(schedule({ intervalCount: 3 }), 2))).toBe('2027-04-30T09:30:00.000Z');
    const trial = schedule({ trialDays: 14 });
    expect(iso(billingAnchor(trial))).toBe('2027-02-14T09:30:00.000Z');
    expect(iso(cycleDueAt(trial, 1))).toBe('2027-02-14T09:30:00.000Z');
    expect(iso(cycleDueAt(trial, 2))).toBe('2027-03-14T09:30:00.000Z');
    expect(() => cycleDueAt(trial, 0)).toThrow();
  });

  it('knows the last cycle of a limited subscription', () => {
    expect(isLastCycle({ cycles: 3 }, 2)).toBe(false);
    expect(isLastCycle({ cycles: 3 }, 3)).toBe(true);
    expect(isLastCycle({ cycles: null }, 1000)).toBe(false);
  });
});

describe('parseSchedule', () => {
  const input = { interval: 'month', intervalCount: undefined, startDate: undefined, trialDays: undefined, cycles: undefined };
  it('defaults to one period, starting now, no trial, until canceled', () => {
    expect(parseSchedule(input, NOW)).toEqual({ interval: 'month', intervalCount: 1, startDate: NOW, trialDays: 0, cycles: null });
  });
  it.each([
    [{ interval: 'fortnight' }, 'subscription.schedule_invalid interval'],
    [{ intervalCount: 13 }, 'subscription.schedule_invalid interval_count'],
    [{ interval: 'year', intervalCount: 2 }, 'subscription.schedule_invalid interval_count'],
    [{ interval: 'day', intervalCount: 366 }, 'subscription.schedule_invalid interval_count'],
    [{ intervalCount: 0 }, 'subscription.schedule_invalid interval_count'],
    [{ intervalCount: 1.5 }, 'subscription.schedule_invalid interval_count'],
    [{ startDate: new Date(NOW.getTime() - 3_600_000) }, 'subscription.schedule_invalid start_date'],
    [{ startDate: new Date(NOW.getTime() + 6 * 366 * 86_400_000) }, 'subscription.schedule_invalid start_date'],
    [{ trialDays: -1 }, 'subscription.schedule_invalid trial_days'],
    [{ trialDays: 731 }, 'subscription.schedule_invalid trial_days'],
    [{ cycles: 0 }, 'subscription.schedule_invalid cycles'],
    [{ cycles: 1001 }, 'subscription.schedule_invalid cycles'],
  ])('refuses %o', (overrides, expected) => {
    expect(paramOf(() => parseSchedule({ ...input, ...overrides }, NOW))).toBe(expected);
  });
  it('accepts the longest cycles and trials, and a start within a minute in the past', () => {
    expect(paramOf(() => parseSchedule({ ...input, interval: 'week', intervalCount: 52, trialDays: 730, cycles: 1000, startDate: new Date(NOW.getTime() - 30_000) }, NOW))).toBe('ok');
  });
});

describe('dunning', () => {
  it('retries 1, 3 and 5 days after the first failure, then no more', () => {
    const failed = new Date('2027-03-31T09:30:00.000Z');
    expect([1, 2, 3, 4].map((r) => iso(retryDueAt(failed, r)))).toEqual(['2027-04-01T09:30:00.000Z', '2027-04-03T09:30:00.000Z', '2027-04-05T09:30:00.000Z', null]);
  });
});
