import { EVENT_ID_PREFIX } from '../../event/domain/domain-event.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { payoutFailurePosting, payoutPaidPosting } from '../../ledger/domain/postings.ts';
import {
  arrivePayout,
  dayAfter,
  failPayout,
  latestCutoff,
  PAYOUT_EVENT_ORDER_LIMIT,
  PAYOUT_ID_PREFIX,
  PAYOUT_TRANSIT_DAYS,
  SANDBOX_PAYOUT_IBAN,
  SIMULATED_FAILURE_CODE,
  sendPayout,
  type Payout,
} from '../domain/payout.entity.ts';
import type { PayoutBatcher, PayoutReader } from '../ports/payout-repository.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { UnitOfWork } from '../../../kernel/ports/unit-of-work.port.ts';
import type { SettleDue } from './settle-due.ts';

/** How the simulated bank answers a payout that reaches it. */
export type BankOutcome = 'paid' | 'failed';

/** Payouts: the daily run, the test helper's run, and moving payouts along to paid. */
export interface PayoutRuns {
  /**
   * The settler's tick: settles what is due, makes the day's payouts once the day's cut-off has
   * passed (once per day, whichever worker gets there first), sends pending payouts and marks
   * those due as arrived. Answers how many payouts it made.
   */
  scheduled(): Promise<number>;
  /**
   * Test mode's run for one merchant: settles everything captured until now as if the delay had
   * passed, pays it out at once, and has the simulated bank answer `outcome` (paid within the call).
   */
  runNow(scope: Scope, outcome: BankOutcome): Promise<{ settledOrders: number; payouts: Payout[] }>;
}

/** Payouts moved per pass of the settler (the rest wait for the next minute). */
const MOVE_BATCH = 500;

/** Creates the payout runs. `cutoffMinutesUtc`: the daily cut-off, minutes after midnight UTC. */
export function createPayoutRuns(deps: {
  readonly uow: UnitOfWork;
  readonly batcher: PayoutBatcher;
  readonly reader: PayoutReader;
  readonly settleDue: SettleDue;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly cutoffMinutesUtc: number;
}): PayoutRuns {
  const eventIds = () => ({ eventId: deps.ids.newId(EVENT_ID_PREFIX), now: deps.clock.now() });
  const newId = () => deps.ids.newId(PAYOUT_ID_PREFIX);

  /** pending → in_transit with payout.settled, in one transaction; a payout already sent is left. */
  async function send(id: string): Promise<void> {
    await deps.uow.run(async (tx) => {
      const payout = await tx.payouts.lock(id);
      if (payout?.status !== 'pending') return;
      const orders = await tx.payouts.ordersOf(id, PAYOUT_EVENT_ORDER_LIMIT);
      const t = sendPayout(payout, orders, eventIds());
      await tx.payouts.save(t.payout);
      await tx.outbox.append(t.event);
    });
  }

  /** in_transit → paid (or failed, the money back on the available balance), with its event and ledger transaction. */
  async function arrive(id: string, outcome: BankOutcome): Promise<void> {
    await deps.uow.run(async (tx) => {
      const payout = await tx.payouts.lock(id);
      if (payout?.status !== 'in_transit') return;
      const ids = eventIds();
      const t = outcome === 'paid' ? arrivePayout(payout, ids) : failPayout(payout, SIMULATED_FAILURE_CODE, ids);
      const facts = { payoutId: payout.id, merchantId: payout.merchantId, livemode: payout.livemode, amount: { amount: payout.amount, currency: payout.currency }, at: ids.now };
      await tx.ledger.post(outcome === 'paid' ? payoutPaidPosting(facts) : payoutFailurePosting(facts));
      await tx.payouts.save(t.payout);
      await tx.outbox.append(t.event);
    });
  }

  /** Sends what is pending and lands what is due, in `scope` when given; one payout's trouble does not stop the others. */
  async function move(today: string, scope: Scope | undefined, outcome: BankOutcome): Promise<void> {
    const { toSend } = await deps.reader.moving(today, scope, MOVE_BATCH);
    for (const id of toSend) await send(id);
    const { toArrive } = await deps.reader.moving(today, scope, MOVE_BATCH);
    for (const id of toArrive) await arrive(id, outcome);
  }

  return {
    async scheduled() {
      await deps.settleDue();
      const now = deps.clock.now();
      const cutoff = latestCutoff(now, deps.cutoffMinutesUtc);
      const made = await deps.batcher.makePayouts({
        now,
        cutoff,
        day: cutoff.toISOString().slice(0, 10),
        arrivalDate: dayAfter(cutoff, PAYOUT_TRANSIT_DAYS),
        sandboxIban: SANDBOX_PAYOUT_IBAN,
        newId,
      });
      await move(now.toISOString().slice(0, 10), undefined, 'paid');
      return made?.length ?? 0;
    },

    async runNow(scope, outcome) {
      const settledOrders = await deps.settleDue({ scope, ignoreDelay: true });
      const now = deps.clock.now();
      const today = now.toISOString().slice(0, 10);
      const made = (await deps.batcher.makePayouts({ now, cutoff: now, arrivalDate: today, scope, sandboxIban: SANDBOX_PAYOUT_IBAN, newId })) ?? [];
      await move(today, scope, outcome);
      const payouts: Payout[] = [];
      for (const id of made) {
        const payout = await deps.reader.findById(scope, id);
        if (payout) payouts.push(payout);
      }
      return { settledOrders, payouts };
    },
  };
}
