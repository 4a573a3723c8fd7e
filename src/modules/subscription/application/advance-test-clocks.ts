import { EVENT_ID_PREFIX } from '../../event/domain/domain-event.ts';
import { finishAdvance, type TestClock } from '../domain/test-clock.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { SubscriptionReader } from '../ports/subscription-repository.port.ts';
import type { Billing } from './bill-subscriptions.ts';

/** How long a biller holds a clock it works on before another may take it (a step takes far less). */
export const CLOCK_LEASE_MS = 60_000;

/** Clocks one step of a biller works on, and what it does on each at most (charges, retries and cancellations). */
export const DEFAULT_CLOCK_STEP = { clocks: 10, chargesPerClock: 25 } as const;

/** Test clocks advancing in the background: the biller's part of each advance (docs/recurring.md). */
export interface TestClockAdvances {
  /**
   * One step: leases up to `clocks` advancing clocks that no other biller holds (SKIP LOCKED, the
   * least recently worked on first) and moves each towards its target by at most `chargesPerClock`
   * pieces of work, in order of time, the clock stepping to each charge's time. A clock with nothing
   * due left up to its target stands at the target, ready, with test_clock.ready; one with more to do
   * is let go for the next step (of this biller or another). Answers how many clocks became ready.
   */
  step(limits?: { readonly clocks?: number; readonly chargesPerClock?: number }): Promise<number>;
}

/** Creates the advances over the billing (which charges each subscription exactly once at a given time). */
export function createTestClockAdvances(deps: {
  readonly uow: UnitOfWork;
  readonly subscriptions: SubscriptionReader;
  readonly billing: Pick<Billing, 'chargeDue'>;
  readonly ids: IdGenerator;
  /** The real time: leases run on it. */
  readonly clock: Clock;
  readonly onBackgroundError: (err: unknown) => void;
}): TestClockAdvances {
  /** Lets the clock go for the next step, if this biller still holds it; its lease now says when it was last worked on. */
  async function release(leased: TestClock): Promise<void> {
    await deps.uow.run(async (tx) => {
      const current = await tx.testClocks.lock(leased.id);
      if (current?.status !== 'advancing' || current.leaseUntil?.getTime() !== leased.leaseUntil?.getTime()) return;
      await tx.testClocks.save({ ...current, leaseUntil: deps.clock.now() });
    });
  }

  /** The advance is done: the clock at its target, ready, with its event (once, whoever gets here first). */
  async function finish(leased: TestClock): Promise<boolean> {
    return deps.uow.run(async (tx) => {
      const current = await tx.testClocks.lock(leased.id);
      if (current?.status !== 'advancing' || current.targetFrozenTime?.getTime() !== leased.targetFrozenTime?.getTime()) return false;
      // Dated at the clock's time, as the events of the charges on the way: it is told after them.
      const { clock, event } = finishAdvance(current, { eventId: deps.ids.newId(EVENT_ID_PREFIX), now: current.targetFrozenTime! });
      await tx.testClocks.save(clock);
      await tx.outbox.append(event);
      return true;
    });
  }

  /** Works on one leased clock: true when it became ready. */
  async function advance(leased: TestClock, budget: number): Promise<boolean> {
    const target = leased.targetFrozenTime;
    if (!target) return false;
    let done = 0;
    while (done < budget) {
      const next = await deps.subscriptions.nextDueOnClock(leased.id);
      if (!next || next.getTime() > target.getTime()) return finish(leased);
      // The clock steps to the charge's time (forward only), then what is due then runs at that time.
      await deps.uow.run(async (tx) => {
        const current = await tx.testClocks.lock(leased.id);
        if (current?.status === 'advancing' && current.frozenTime.getTime() < next.getTime()) await tx.testClocks.save({ ...current, frozenTime: next });
      });
      const at: Clock = { now: () => new Date(next.getTime()) };
      let progressed = false;
      for (const id of await deps.subscriptions.due(next, leased.id, budget - done)) {
        const result = await deps.billing.chargeDue(id, at);
        if (result === 'charged' || result === 'failed' || result === 'canceled') {
          progressed = true;
          done++;
        }
      }
      // A charge another process is making, or a subscription held for a moment: the next step takes it up.
      if (!progressed) break;
    }
    // The budget is spent with more to do (or nothing moved): the clock shows how far it got.
    const next = await deps.subscriptions.nextDueOnClock(leased.id);
    if (!next || next.getTime() > target.getTime()) return finish(leased);
    await release(leased);
    return false;
  }

  return {
    async step(limits = {}) {
      const now = deps.clock.now();
      const leased = await deps.subscriptions.claimAdvancingClocks(now, new Date(now.getTime() + CLOCK_LEASE_MS), limits.clocks ?? DEFAULT_CLOCK_STEP.clocks);
      let ready = 0;
      for (const clock of leased) {
        try {
          if (await advance(clock, limits.chargesPerClock ?? DEFAULT_CLOCK_STEP.chargesPerClock)) ready++;
        } catch (err) {
          // Its lease runs out and a later step takes it up again; the fault is the operator's to see.
          deps.onBackgroundError(err);
        }
      }
      return ready;
    },
  };
}
