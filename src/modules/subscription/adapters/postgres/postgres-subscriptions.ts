import type { Knex } from 'knex';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { LineItem } from '../../../order/domain/order.entity.ts';
import type { Interval } from '../../domain/schedule.ts';
import type { AfterFailedRetries, CancellationReason, Subscription, SubscriptionStatus } from '../../domain/subscription.entity.ts';
import type { BillingInterval, TestClock, TestClockStatus } from '../../domain/test-clock.ts';
import type { SubscriptionCycle, SubscriptionReader, SubscriptionRepository, TestClockRepository } from '../../ports/subscription-repository.port.ts';
import { UnknownCursorError } from '../../../../kernel/ports/errors.ts';
import { translateErrors } from '../../../../kernel/adapters/postgres/database.ts';

interface SubscriptionRow {
  id: string;
  merchant_id: string;
  livemode: boolean;
  customer_id: string;
  card_id: string;
  amount: string;
  currency: string;
  reference: string;
  line_items: { name: string; amount: string | number }[];
  interval: string;
  interval_count: number;
  start_date: Date;
  trial_days: number;
  cycles: number | null;
  after_failed_retries: string;
  status: string;
  next_cycle: number;
  next_charge_at: Date | null;
  retries: number;
  first_failure_at: Date | null;
  cancel_at_period_end: boolean;
  canceled_at: Date | null;
  cancellation_reason: string | null;
  test_clock_id: string | null;
  version: number;
  created_at: Date;
  updated_at: Date;
}

const date = (value: Date | null) => (value === null ? null : new Date(value));

function fromRow(row: SubscriptionRow): Subscription {
  return {
    id: row.id,
    merchantId: row.merchant_id,
    livemode: row.livemode,
    customerId: row.customer_id,
    cardId: row.card_id,
    amount: BigInt(row.amount),
    currency: row.currency.trim(),
    reference: row.reference,
    lineItems: row.line_items.map((item): LineItem => ({ name: item.name, amount: BigInt(item.amount) })),
    schedule: { interval: row.interval as Interval, intervalCount: row.interval_count, startDate: new Date(row.start_date), trialDays: row.trial_days, cycles: row.cycles },
    afterFailedRetries: row.after_failed_retries as AfterFailedRetries,
    status: row.status as SubscriptionStatus,
    nextCycle: row.next_cycle,
    nextChargeAt: date(row.next_charge_at),
    retries: row.retries,
    firstFailureAt: date(row.first_failure_at),
    cancelAtPeriodEnd: row.cancel_at_period_end,
    canceledAt: date(row.canceled_at),
    cancellationReason: row.cancellation_reason as CancellationReason | null,
    testClockId: row.test_clock_id,
    version: row.version,
    createdAt: new Date(row.created_at),
  };
}

/** The columns a transition changes. */
function changing(s: Subscription, now: Date) {
  return {
    card_id: s.cardId,
    status: s.status,
    next_cycle: s.nextCycle,
    next_charge_at: s.nextChargeAt,
    retries: s.retries,
    first_failure_at: s.firstFailureAt,
    cancel_at_period_end: s.cancelAtPeriodEnd,
    canceled_at: s.canceledAt,
    cancellation_reason: s.cancellationReason,
    version: s.version,
    updated_at: now,
  };
}

interface CycleRow {
  subscription_id: string;
  cycle: number;
  order_id: string;
  charges_started: number;
  charges_recorded: number;
  charge_started_at: Date | null;
}

const cycleFromRow = (row: CycleRow): SubscriptionCycle => ({
  subscriptionId: row.subscription_id,
  cycle: row.cycle,
  orderId: row.order_id,
  chargesStarted: row.charges_started,
  chargesRecorded: row.charges_recorded,
  chargeStartedAt: row.charge_started_at ? new Date(row.charge_started_at) : null,
});

const DUE_STATUSES = ['trialing', 'active', 'past_due'];

/** SubscriptionReader on the subscriptions tables (migration 019). */
export class PostgresSubscriptionReader implements SubscriptionReader {
  readonly #knex: Knex;

  constructor(knex: Knex) {
    this.#knex = knex;
  }

  findById(scope: Scope, id: string): Promise<Subscription | undefined> {
    return translateErrors(async () => {
      const row = await this.#knex<SubscriptionRow>('subscriptions').where({ id, merchant_id: scope.merchantId, livemode: scope.livemode }).first();
      return row ? fromRow(row) : undefined;
    });
  }

  list(scope: Scope, query: { readonly limit: number; readonly startingAfter: string | undefined; readonly customerId: string | undefined }): Promise<{ subscriptions: Subscription[]; hasMore: boolean }> {
    return translateErrors(async () => {
      const q = this.#knex<SubscriptionRow>('subscriptions')
        .where({ merchant_id: scope.merchantId, livemode: scope.livemode })
        .orderBy([
          { column: 'created_at', order: 'desc' },
          { column: 'id', order: 'desc' },
        ])
        .limit(query.limit + 1);
      if (query.customerId !== undefined) q.andWhere('customer_id', query.customerId);
      if (query.startingAfter !== undefined) {
        const cursor = await this.#knex<SubscriptionRow>('subscriptions').select('created_at', 'id').where({ id: query.startingAfter, merchant_id: scope.merchantId, livemode: scope.livemode }).first();
        if (!cursor) throw new UnknownCursorError(`starting_after "${query.startingAfter}" is not one of your subscriptions in this mode.`);
        q.andWhereRaw('(created_at, id) < (?, ?)', [cursor.created_at, cursor.id]);
      }
      const rows = await q;
      return { subscriptions: rows.slice(0, query.limit).map(fromRow), hasMore: rows.length > query.limit };
    });
  }

  due(now: Date, testClockId: string | null, limit: number): Promise<string[]> {
    return translateErrors(() => {
      const q = this.#knex('subscriptions').whereIn('status', DUE_STATUSES).andWhere('next_charge_at', '<=', now).orderBy('next_charge_at').limit(limit);
      if (testClockId === null) q.whereNull('test_clock_id');
      else q.where('test_clock_id', testClockId);
      return q.pluck('id');
    });
  }

  claimDue(now: Date, leaseUntil: Date, limit: number): Promise<string[]> {
    return translateErrors(async () => {
      const claimed = await this.#knex.raw<{ rows: { id: string }[] }>(
        `UPDATE subscriptions SET lease_until = :leaseUntil
         WHERE id IN (
           SELECT id FROM subscriptions
           WHERE test_clock_id IS NULL AND status IN ('trialing', 'active', 'past_due') AND next_charge_at <= :now
             AND (lease_until IS NULL OR lease_until < :now)
           ORDER BY next_charge_at LIMIT :limit
           FOR UPDATE SKIP LOCKED)
         RETURNING id`,
        { now, leaseUntil, limit },
      );
      return claimed.rows.map((row) => row.id);
    });
  }

  nextDueOnClock(testClockId: string): Promise<Date | null> {
    return translateErrors(async () => {
      const row = await this.#knex('subscriptions').where('test_clock_id', testClockId).whereIn('status', DUE_STATUSES).whereNotNull('next_charge_at').min<{ at: Date | null }>({ at: 'next_charge_at' }).first();
      return row?.at ? new Date(row.at) : null;
    });
  }

  claimAdvancingClocks(now: Date, leaseUntil: Date, limit: number): Promise<TestClock[]> {
    return translateErrors(async () => {
      const claimed = await this.#knex.raw<{ rows: ClockRow[] }>(
        `UPDATE test_clocks SET lease_until = :leaseUntil
         WHERE id IN (
           SELECT id FROM test_clocks
           WHERE status = 'advancing' AND deleted_at IS NULL AND (lease_until IS NULL OR lease_until <= :now)
           ORDER BY lease_until NULLS FIRST LIMIT :limit
           FOR UPDATE SKIP LOCKED)
         RETURNING *`,
        { now, leaseUntil, limit },
      );
      return claimed.rows.map(clockFromRow).sort((a, b) => (a.advancingSince?.getTime() ?? 0) - (b.advancingSince?.getTime() ?? 0));
    });
  }

  cyclesOf(subscriptionId: string): Promise<SubscriptionCycle[]> {
    return translateErrors(async () => (await this.#knex<CycleRow>('subscription_cycles').where({ subscription_id: subscriptionId }).orderBy('cycle')).map(cycleFromRow));
  }
}

/** SubscriptionRepository in one transaction. */
export class PostgresSubscriptionRepository implements SubscriptionRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  insert(s: Subscription): Promise<void> {
    return translateErrors(async () => {
      await this.#db('subscriptions').insert({
        id: s.id,
        merchant_id: s.merchantId,
        livemode: s.livemode,
        customer_id: s.customerId,
        amount: s.amount.toString(),
        currency: s.currency,
        reference: s.reference,
        line_items: JSON.stringify(s.lineItems.map((item) => ({ name: item.name, amount: item.amount.toString() }))),
        interval: s.schedule.interval,
        interval_count: s.schedule.intervalCount,
        start_date: s.schedule.startDate,
        trial_days: s.schedule.trialDays,
        cycles: s.schedule.cycles,
        after_failed_retries: s.afterFailedRetries,
        test_clock_id: s.testClockId,
        created_at: s.createdAt,
        ...changing(s, s.createdAt),
      });
    });
  }

  lock(id: string, options: { readonly skipLocked?: boolean } = {}): Promise<Subscription | undefined> {
    return translateErrors(async () => {
      const q = this.#db<SubscriptionRow>('subscriptions').where({ id }).forUpdate();
      const row = await (options.skipLocked ? q.skipLocked() : q).first();
      return row ? fromRow(row) : undefined;
    });
  }

  save(s: Subscription): Promise<void> {
    return translateErrors(async () => {
      await this.#db('subscriptions').where({ id: s.id }).update(changing(s, new Date()));
    });
  }

  lockOfCustomer(customerId: string): Promise<Subscription[]> {
    return translateErrors(async () => (await this.#db<SubscriptionRow>('subscriptions').where({ customer_id: customerId }).orderBy('id').forUpdate()).map(fromRow));
  }

  findCycle(subscriptionId: string, cycle: number): Promise<SubscriptionCycle | undefined> {
    return translateErrors(async () => {
      const row = await this.#db<CycleRow>('subscription_cycles').where({ subscription_id: subscriptionId, cycle }).first();
      return row ? cycleFromRow(row) : undefined;
    });
  }

  addCycle(cycle: Omit<SubscriptionCycle, 'chargesStarted' | 'chargesRecorded' | 'chargeStartedAt'>, at: Date): Promise<SubscriptionCycle> {
    return translateErrors(async () => {
      await this.#db('subscription_cycles')
        .insert({ subscription_id: cycle.subscriptionId, cycle: cycle.cycle, order_id: cycle.orderId, created_at: at })
        .onConflict(['subscription_id', 'cycle'])
        .ignore();
      const row = await this.#db<CycleRow>('subscription_cycles').where({ subscription_id: cycle.subscriptionId, cycle: cycle.cycle }).first();
      return cycleFromRow(row!);
    });
  }

  noteChargeStarted(subscriptionId: string, cycle: number, at: Date): Promise<void> {
    return translateErrors(async () => {
      await this.#db('subscription_cycles').where({ subscription_id: subscriptionId, cycle }).update({ charges_started: this.#db.raw('charges_started + 1'), charge_started_at: at });
    });
  }

  noteChargesRecorded(subscriptionId: string, cycle: number, recorded: number): Promise<void> {
    return translateErrors(async () => {
      await this.#db('subscription_cycles').where({ subscription_id: subscriptionId, cycle }).update({ charges_recorded: recorded });
    });
  }
}

interface ClockRow {
  id: string;
  merchant_id: string;
  name: string;
  frozen_time: Date;
  status: string;
  target_frozen_time: Date | null;
  advancing_since: Date | null;
  lease_until: Date | null;
  version: number;
  created_at: Date;
}

const clockFromRow = (row: ClockRow): TestClock => ({
  id: row.id,
  merchantId: row.merchant_id,
  name: row.name,
  frozenTime: new Date(row.frozen_time),
  status: row.status as TestClockStatus,
  targetFrozenTime: date(row.target_frozen_time),
  advancingSince: date(row.advancing_since),
  leaseUntil: date(row.lease_until),
  version: row.version,
  createdAt: new Date(row.created_at),
});

/** TestClockRepository on test_clocks. */
export class PostgresTestClockRepository implements TestClockRepository {
  readonly #db: Knex | Knex.Transaction;

  constructor(db: Knex | Knex.Transaction) {
    this.#db = db;
  }

  insert(clock: TestClock): Promise<void> {
    return translateErrors(async () => {
      await this.#db('test_clocks').insert({ id: clock.id, merchant_id: clock.merchantId, name: clock.name, frozen_time: clock.frozenTime, status: clock.status, version: clock.version, created_at: clock.createdAt });
    });
  }

  findById(merchantId: string, id: string): Promise<TestClock | undefined> {
    return translateErrors(async () => {
      const row = await this.#db<ClockRow>('test_clocks').where({ id, merchant_id: merchantId }).whereNull('deleted_at').first();
      return row ? clockFromRow(row) : undefined;
    });
  }

  lock(id: string): Promise<TestClock | undefined> {
    return translateErrors(async () => {
      const row = await this.#db<ClockRow>('test_clocks').where({ id }).whereNull('deleted_at').forUpdate().first();
      return row ? clockFromRow(row) : undefined;
    });
  }

  advancingOf(merchantId: string): Promise<string[]> {
    return translateErrors(async () => {
      // A transaction-scoped advisory lock per merchant: released by the commit that makes this advance visible to the next count.
      await this.#db.raw('SELECT pg_advisory_xact_lock(hashtextextended(?, 0))', [`test_clocks:advancing:${merchantId}`]);
      return this.#db('test_clocks').where({ merchant_id: merchantId, status: 'advancing' }).whereNull('deleted_at').orderBy('advancing_since').pluck('id');
    });
  }

  billingIntervals(id: string): Promise<BillingInterval[]> {
    return translateErrors(async () => {
      const rows = await this.#db('subscriptions').where('test_clock_id', id).whereIn('status', DUE_STATUSES).distinct<{ interval: string; interval_count: number }[]>('interval', 'interval_count');
      return rows.map((row) => ({ interval: row.interval as Interval, count: row.interval_count }));
    });
  }

  save(clock: TestClock): Promise<void> {
    return translateErrors(async () => {
      await this.#db('test_clocks')
        .where({ id: clock.id })
        .update({
          frozen_time: clock.frozenTime,
          status: clock.status,
          target_frozen_time: clock.targetFrozenTime,
          advancing_since: clock.advancingSince,
          lease_until: clock.leaseUntil,
          version: clock.version,
        });
    });
  }
}
