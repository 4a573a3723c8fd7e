import { describe, expect, it } from 'vitest';
import { DomainError } from '../shared/domain-error.ts';
import { checkAdvance, newTestClock } from './test-clock.ts';

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

  it('only move forward, at most five years at once', () => {
    const clock = newTestClock({ id: 'c', merchantId: 'm', name: undefined, frozenTime: undefined }, NOW);
    expect(paramOf(() => checkAdvance(clock, NOW))).toBe('test_clock.invalid to');
    expect(paramOf(() => checkAdvance(clock, new Date('2026-12-31T00:00:00Z')))).toBe('test_clock.invalid to');
    expect(paramOf(() => checkAdvance(clock, new Date('2033-01-01T00:00:00Z')))).toBe('test_clock.invalid to');
    expect(paramOf(() => checkAdvance(clock, new Date('2028-01-01T00:00:00Z')))).toBe('ok');
  });
});
