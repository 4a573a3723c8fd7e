import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { advanceLimit, checkAdvance, finishAdvance, newTestClock, startAdvance } from './test-clock.ts';

const NOW = new Date('2027-01-01T00:00:00.000Z');
const paramOf = (fn: () => unknown) => {
  try {
    fn();
    return 'ok';
  } catch (err) {
    return err instanceof DomainError ? `${err.code} ${err.param}` : String(err);
  }
};

describe('test clocks', () => {
  it('start frozen at now or at the time given, ready', () => {
    expect(newTestClock({ id: 'clock_1', merchantId: 'mer_1', name: undefined, frozenTime: undefined }, NOW)).toMatchObject({ frozenTime: NOW, status: 'ready', name: '' });
    const at = new Date('2027-06-01T12:00:00.000Z');
    expect(newTestClock({ id: 'clock_1', merchantId: 'mer_1', name: 'annual plan', frozenTime: at }, NOW).frozenTime).toEqual(at);
  });

  it('refuse a start in the past or more than five years away, and a long name', () => {
    expect(paramOf(() => newTestClock({ id: 'c', merchantId: 'm', name: undefined, frozenTime: new Date('2026-12-31T00:00:00Z') }, NOW))).toBe('test_clock.invalid frozen_time');
    expect(paramOf(() => newTestClock({ id: 'c', merchantId: 'm', name: undefined, frozenTime: new Date('2033-01-01T00:00:00Z') }, NOW))).toBe('test_clock.invalid frozen_time');
    expect(paramOf(() => newTestClock({ id: 'c', merchantId: 'm', name: 'x'.repeat(101), frozenTime: undefined }, NOW))).toBe('test_clock.invalid name');
  });

  it('only move forward', () => {
    const clock = newTestClock({ id: 'c', merchantId: 'm', name: undefined, frozenTime: undefined }, NOW);
    expect(paramOf(() => checkAdvance(clock, NOW, []))).toBe('test_clock.invalid to');
    expect(paramOf(() => checkAdvance(clock, new Date('2026-12-31T00:00:00Z'), []))).toBe('test_clock.invalid to');
    expect(paramOf(() => checkAdvance(clock, new Date('2028-01-01T00:00:00Z'), []))).toBe('ok');
  });

  it('advance at most two periods of the shortest subscription billing on them, two years with none (as Stripe)', () => {
    const clock = newTestClock({ id: 'c', merchantId: 'm', name: undefined, frozenTime: new Date('2027-01-31T09:00:00Z') }, NOW);
    const daily = { interval: 'day', count: 1 } as const;
    const monthly = { interval: 'month', count: 1 } as const;
    const quarterly = { interval: 'month', count: 3 } as const;
    const fortnightly = { interval: 'week', count: 2 } as const;
    // Calendar periods: two months from 31 January is 31 March.
    expect(advanceLimit(clock, [monthly]).limit).toEqual(new Date('2027-03-31T09:00:00Z'));
    expect(advanceLimit(clock, [quarterly, monthly, { interval: 'year', count: 1 }]).limit).toEqual(new Date('2027-03-31T09:00:00Z'));
    expect(advanceLimit(clock, [monthly, daily]).limit).toEqual(new Date('2027-02-02T09:00:00Z'));
    expect(advanceLimit(clock, [fortnightly, monthly]).limit).toEqual(new Date('2027-02-28T09:00:00Z'));
    expect(advanceLimit(clock, []).limit).toEqual(new Date('2029-01-31T09:00:00Z'));
    // Five years on a daily subscription: refused, with the rule and the furthest time allowed.
    const fiveYears = new Date('2032-01-31T09:00:00Z');
    expect(paramOf(() => checkAdvance(clock, fiveYears, [daily]))).toBe('test_clock.invalid to');
    expect(() => checkAdvance(clock, fiveYears, [daily])).toThrow(/at most two periods of its shortest subscription \(1 day\) at once: to must be at most 2027-02-02T09:00:00.000Z/);
    expect(paramOf(() => checkAdvance(clock, new Date('2027-02-02T09:00:00Z'), [daily]))).toBe('ok');
    expect(paramOf(() => checkAdvance(clock, new Date('2029-01-31T09:00:01Z'), []))).toBe('test_clock.invalid to');
  });

  it('go ready at the target with test_clock.ready, dated at the clock\'s time and numbered by the clock\'s version', () => {
    const clock = newTestClock({ id: 'clock_1', merchantId: 'mer_1', name: 'x', frozenTime: undefined }, NOW);
    const to = new Date('2027-02-01T00:00:00Z');
    const advancing = startAdvance(clock, to, NOW);
    expect(advancing).toMatchObject({ status: 'advancing', targetFrozenTime: to, frozenTime: NOW, version: 1 });
    const { clock: ready, event } = finishAdvance({ ...advancing, frozenTime: new Date('2027-01-15T00:00:00Z') }, { eventId: 'evt_1', now: to });
    expect(ready).toMatchObject({ status: 'ready', frozenTime: to, targetFrozenTime: null, leaseUntil: null, version: 2 });
    expect(event).toMatchObject({ type: 'test_clock.ready', subject: { type: 'test_clock', id: 'clock_1' }, sequence: 2, createdAt: to, livemode: false });
    expect(event.data).toMatchObject({ id: 'clock_1', status: 'ready', frozen_time: to.toISOString(), target_frozen_time: null });
    expect(() => finishAdvance(ready, { eventId: 'evt_2', now: to })).toThrow(/not advancing/);
  });
});
