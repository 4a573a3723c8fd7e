import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import type { Schedule } from './schedule.ts';
import {
  assertAllowed,
  cancelAtPeriodEnd,
  cancelNow,
  endsBeforeNextCycle,
  isDue,
  noteCharged,
  noteChargeFailed,
  pause,
  resume,
  startSubscription,
  type AfterFailedRetries,
  type Subscription,
} from './subscription.entity.ts';

const START = new Date('2027-01-31T09:00:00.000Z');
const DAY = 86_400_000;
let n = 0;
const at = (now: Date) => () => ({ eventId: `evt_${++n}`, now });

function subscription(schedule: Partial<Schedule> = {}, afterFailedRetries: AfterFailedRetries = 'unpaid'): Subscription {
  return startSubscription(
    {
      id: 'sub_1',
      merchantId: 'mer_1',
      livemode: false,
      customerId: 'cus_1',
      cardId: 'card_1',
      amount: 990n,
      currency: 'EUR',
      reference: 'plan-gold',
      lineItems: [],
      schedule: { interval: 'month', intervalCount: 1, startDate: START, trialDays: 0, cycles: null, ...schedule },
      afterFailedRetries,
      testClockId: null,
    },
    at(START)(),
  ).subscription;
}
const order = (id: string) => ({ id, data: { id }, receiptUrl: `https://pay.test/c/${id}` });
const iso = (d: Date | null) => d?.toISOString() ?? null;

describe('a subscription, cycle by cycle', () => {
  it('starts active with its first cycle due at once, or trialing until the trial ends', () => {
    const s = subscription();
    expect(s).toMatchObject({ status: 'active', nextCycle: 1, version: 1 });
    expect(iso(s.nextChargeAt)).toBe(START.toISOString());
    expect(isDue(s, START)).toBe(true);
    const t = subscription({ trialDays: 7 });
    expect(t.status).toBe('trialing');
    expect(iso(t.nextChargeAt)).toBe('2027-02-07T09:00:00.000Z');
    expect(isDue(t, new Date(START.getTime() + 6 * DAY))).toBe(false);
  });

  it('charges a 31 January subscription on 28 February and 31 March, each charge an event with its cycle, order and receipt', () => {
    let s = subscription();
    const dates: (string | null)[] = [];
    for (const cycle of [1, 2, 3]) {
      const [t] = noteCharged(s, cycle, order(`ord_${cycle}`), at(s.nextChargeAt!));
      s = t!.subscription;
      dates.push(iso(s.nextChargeAt));
      expect(t!.event).toMatchObject({ type: 'subscription.charged', subject: { type: 'subscription', id: 'sub_1' }, reference: 'plan-gold', sequence: s.version });
      expect(t!.event.data).toMatchObject({ cycle, order: { id: `ord_${cycle}` }, receipt_url: `https://pay.test/c/ord_${cycle}` });
    }
    expect(dates).toEqual(['2027-02-28T09:00:00.000Z', '2027-03-31T09:00:00.000Z', '2027-04-30T09:00:00.000Z']);
    expect(() => noteCharged(s, 2, order('ord_x'), at(START))).toThrow(/cycle 4 is next/);
  });

  it('ends after its last cycle: canceled with reason cycles_completed', () => {
    const s = subscription({ cycles: 2 });
    const [first] = noteCharged(s, 1, order('ord_1'), at(START));
    const second = noteCharged(first!.subscription, 2, order('ord_2'), at(START));
    expect(second.map((t) => t.event.type)).toEqual(['subscription.charged', 'subscription.canceled']);
    expect(second[1]!.subscription).toMatchObject({ status: 'canceled', cancellationReason: 'cycles_completed', nextChargeAt: null });
    expect(second[1]!.event.sequence).toBe(second[0]!.event.sequence + 1);
  });
});

describe('dunning', () => {
  it('retries a failed cycle 1, 3 and 5 days after it first failed, then stops charging (unpaid)', () => {
    let s = subscription();
    const firstFailure = START;
    const seen: unknown[] = [];
    for (let attempt = 1; attempt <= 4; attempt++) {
      const now = attempt === 1 ? firstFailure : s.nextChargeAt!;
      const ts = noteChargeFailed(s, 1, { orderId: 'ord_1', declineCode: 'insufficient_funds' }, at(now));
      s = ts[ts.length - 1]!.subscription;
      seen.push([ts.map((t) => t.event.type), s.status, iso(s.nextChargeAt), ts[0]!.event.data.attempt]);
    }
    expect(seen).toEqual([
      [['subscription.payment_failed'], 'past_due', '2027-02-01T09:00:00.000Z', 1],
      [['subscription.payment_failed'], 'past_due', '2027-02-03T09:00:00.000Z', 2],
      [['subscription.payment_failed'], 'past_due', '2027-02-05T09:00:00.000Z', 3],
      [['subscription.payment_failed', 'subscription.updated'], 'unpaid', null, 4],
    ]);
    expect(isDue(s, new Date('2030-01-01'))).toBe(false);
  });

  it('cancels instead when the merchant chose so, and a retry that succeeds puts it back on schedule', () => {
    let s = subscription({}, 'cancel');
    for (let attempt = 1; attempt <= 4; attempt++) {
      const ts = noteChargeFailed(s, 1, { orderId: 'ord_1', declineCode: null }, at(s.nextChargeAt!));
      s = ts[ts.length - 1]!.subscription;
    }
    expect(s).toMatchObject({ status: 'canceled', cancellationReason: 'payment_failed' });

    let r = subscription();
    r = noteChargeFailed(r, 1, { orderId: 'ord_1', declineCode: 'insufficient_funds' }, at(START))[0]!.subscription;
    const [paid] = noteCharged(r, 1, order('ord_1'), at(r.nextChargeAt!));
    // Recovered: active, the failure forgotten, cycle 2 on the anchor's schedule (not shifted by the retry).
    expect(paid!.subscription).toMatchObject({ status: 'active', retries: 0, firstFailureAt: null, nextCycle: 2 });
    expect(iso(paid!.subscription.nextChargeAt)).toBe('2027-02-28T09:00:00.000Z');
  });
});

describe('the merchant’s actions', () => {
  it('cancels now, or at the period’s end (the next cycle is then not charged)', () => {
    const s = subscription();
    expect(cancelNow(s, 'requested', at(START)()).subscription).toMatchObject({ status: 'canceled', cancellationReason: 'requested', nextChargeAt: null });
    const later = cancelAtPeriodEnd(s, at(START)()).subscription;
    expect(later).toMatchObject({ status: 'active', cancelAtPeriodEnd: true });
    expect(endsBeforeNextCycle(later)).toBe(true);
  });

  it('pauses, then resumes skipping the cycles whose dates passed while paused', () => {
    const [charged] = noteCharged(subscription(), 1, order('ord_1'), at(START));
    const paused = pause(charged!.subscription, at(START)()).subscription;
    expect(paused).toMatchObject({ status: 'paused', nextChargeAt: null });
    const resumed = resume(paused, at(new Date('2027-04-15T00:00:00.000Z'))());
    // Cycles 2 (28 Feb) and 3 (31 Mar) passed while paused: the next is cycle 4 on 30 April.
    expect(resumed.subscription).toMatchObject({ status: 'active', nextCycle: 4 });
    expect(iso(resumed.subscription.nextChargeAt)).toBe('2027-04-30T09:00:00.000Z');
    expect(resumed.event.data).toMatchObject({ skipped_cycles: 2 });
  });

  it('refuses what the state does not allow', () => {
    const canceled = cancelNow(subscription(), 'requested', at(START)()).subscription;
    const codeOf = (fn: () => void) => {
      try {
        fn();
        return 'ok';
      } catch (err) {
        return err instanceof DomainError ? err.code : String(err);
      }
    };
    expect(codeOf(() => assertAllowed(canceled, 'cancel'))).toBe('subscription.state_invalid');
    expect(codeOf(() => assertAllowed(canceled, 'pause'))).toBe('subscription.state_invalid');
    expect(codeOf(() => assertAllowed(subscription(), 'resume'))).toBe('subscription.state_invalid');
    expect(codeOf(() => assertAllowed(subscription(), 'pause'))).toBe('ok');
  });
});
