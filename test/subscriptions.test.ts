// Subscriptions on the real Postgres, driven by test clocks: a year of monthly cycles anchored on
// 31 January (28 February, 31 March, …), each its own order with its receipt and ledger capture;
// a failing card through dunning to recovery, to unpaid and to canceled; cancel at the period's end,
// pause and resume; two schedulers at once and a crash between a charge and its bookkeeping charge
// each cycle once. Test clocks advance in the background, in bounded steps of the biller, a bounded
// distance at a time. Every suite ends with the ledger verified (test/support/service.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { loadConfig } from '../src/composition/config.ts';
import { startWorkers, type WorkerContext } from '../src/composition/workers.ts';
import { startTestService, type TestService } from './support/service.ts';
import { waitFor } from './support/wait.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Subscription shop');
});
afterAll(async () => {
  await svc?.close();
});

const call = async (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown, key = shop.test_secret_key) =>
  svc.app.inject({ method, url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, ...(body === undefined ? {} : { payload: JSON.stringify(body) }) });
const ok = async (method: 'GET' | 'POST', url: string, body?: unknown) => {
  const res = await call(method, url, body);
  expect(res.statusCode, res.body).toBeLessThan(300);
  return res.json();
};
const cardNumber = (behaviour: string) => shop.test_cards.find((c) => c.behaviour === behaviour)!.number;
const rawCard = (behaviour: string) => ({ number: cardNumber(behaviour), exp_month: 12, exp_year: new Date().getUTCFullYear() + 4, cvc: '123', name: 'Ada Lovelace' });

/** A test clock frozen at `at`, a customer on it, and that customer's saved card of `behaviour`. */
async function onClock(at: string, behaviour = 'approved') {
  const clock = await ok('POST', '/v1/test_helpers/test_clocks', { frozen_time: at, name: 'billing year' });
  const customer = await ok('POST', '/v1/customers', { email: 'ada@example.com', test_clock: clock.id });
  expect(customer.test_clock).toBe(clock.id);
  const card = await ok('POST', `/v1/customers/${customer.id}/cards`, { card: rawCard(behaviour) });
  return { clock, customer, card };
}
const clockOf = (clockId: string) => ok('GET', `/v1/test_helpers/test_clocks/${clockId}`);
/** Asks for an advance: answered at once, the clock advancing towards `to` (nothing run yet). */
async function startAdvance(clockId: string, to: string, key = shop.test_secret_key) {
  const res = await call('POST', `/v1/test_helpers/test_clocks/${clockId}/advance`, { to }, key);
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json()).toMatchObject({ id: clockId, object: 'test_clock', status: 'advancing', target_frozen_time: to });
  return res.json();
}
/** Steps the advancing clocks as the biller does, until this one is ready (a generous deadline for a busy machine). */
const untilReady = (clockId: string) =>
  waitFor(
    `test clock ${clockId} ready`,
    async () => {
      await svc.core.testClocks.step();
      return svc.db.knex('test_clocks').where({ id: clockId }).first();
    },
    (row) => row.status === 'ready',
    60_000,
  );
/** Advances a clock through each of `stops` in turn, each advance run to ready; answers the clock at the last. */
async function advance(clockId: string, ...stops: string[]) {
  for (const to of stops) {
    await startAdvance(clockId, to);
    await untilReady(clockId);
  }
  const clock = await clockOf(clockId);
  expect(clock).toMatchObject({ status: 'ready', frozen_time: stops.at(-1), target_frozen_time: null });
  return clock;
}
const orderOf = (id: string) => ok('GET', `/v1/orders/${id}`);
async function eventsOf(subscriptionId: string) {
  return svc.db.knex('events').where({ subject_type: 'subscription', subject_id: subscriptionId }).orderBy('sequence');
}

describe('subscriptions on a test clock', () => {
  it('charges a 31 January subscription monthly for a year: 28 February, 31 March, …, each cycle its order, receipt, event and ledger capture', async () => {
    const { clock, customer, card } = await onClock('2027-01-31T09:00:00.000Z');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 990, currency: 'EUR', reference: 'plan-gold', interval: 'month' });
    // The first cycle is due at once: charged with the creation.
    expect(sub).toMatchObject({ object: 'subscription', status: 'active', next_cycle: 2, next_charge_at: '2027-02-28T09:00:00.000Z', test_clock: clock.id });
    expect(sub.charged_cycles).toHaveLength(1);

    // Two months at a time, the most a monthly subscription's clock advances at once.
    await advance(
      clock.id,
      '2027-03-31T09:00:00.000Z',
      '2027-05-31T09:00:00.000Z',
      '2027-07-31T09:00:00.000Z',
      '2027-09-30T09:00:00.000Z',
      '2027-11-30T09:00:00.000Z',
      '2028-01-30T09:00:00.000Z',
      '2028-01-31T10:00:00.000Z',
    );
    const after = await ok('GET', `/v1/subscriptions/${sub.id}`);
    expect(after).toMatchObject({ status: 'active', next_cycle: 14, next_charge_at: '2028-02-29T09:00:00.000Z' });
    expect(after.charged_cycles.map((c: { cycle: number }) => c.cycle)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);

    const orders = await Promise.all(after.charged_cycles.map((c: { order: string }) => orderOf(c.order)));
    expect(orders.map((o) => o.created.slice(0, 10))).toEqual([
      '2027-01-31', '2027-02-28', '2027-03-31', '2027-04-30', '2027-05-31', '2027-06-30', '2027-07-31',
      '2027-08-31', '2027-09-30', '2027-10-31', '2027-11-30', '2027-12-31', '2028-01-31',
    ]);
    for (const [i, order] of orders.entries()) {
      expect(order).toMatchObject({ status: 'paid', reference: 'plan-gold', amount: 990, customer: customer.id, subscription: sub.id, subscription_cycle: i + 1 });
      expect(await svc.db.knex('ledger_transactions').where({ order_id: order.id, kind: 'capture' })).toHaveLength(1);
    }
    // Each cycle told once, in order, with its order and receipt.
    const charged = (await eventsOf(sub.id)).filter((e) => e.type === 'subscription.charged');
    expect(charged.map((e) => e.data.cycle)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
    expect(charged[1]!.data).toMatchObject({ order: { id: orders[1].id, reference: 'plan-gold' }, receipt_url: orders[1].checkout_url });
    const sequences = (await eventsOf(sub.id)).map((e) => e.sequence);
    expect(sequences).toEqual(sequences.map((_, i) => i + 1));
    expect(await svc.core.ledger.verify()).toBeUndefined();
  });

  it('retries a failing card 1, 3 and 5 days on (past_due), and recovers on a new card; the cycles after keep their dates', async () => {
    const { clock, customer, card } = await onClock('2027-03-31T12:00:00.000Z', 'challenge');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 1500, currency: 'EUR', reference: 'plan-dunning', interval: 'month' });
    // Off-session, a card that asks for 3-D Secure declines: past_due, retried a day later.
    expect(sub).toMatchObject({ status: 'past_due', retries: 0, next_cycle: 1, next_charge_at: '2027-04-01T12:00:00.000Z' });
    await advance(clock.id, '2027-04-03T13:00:00.000Z');
    expect(await ok('GET', `/v1/subscriptions/${sub.id}`)).toMatchObject({ status: 'past_due', retries: 2, next_charge_at: '2027-04-05T12:00:00.000Z' });
    // The customer gives a new card before the last retry.
    const fresh = await ok('POST', `/v1/customers/${customer.id}/cards`, { card: rawCard('approved') });
    await ok('POST', `/v1/subscriptions/${sub.id}`, { card: fresh.id });
    await advance(clock.id, '2027-04-05T13:00:00.000Z');
    const recovered = await ok('GET', `/v1/subscriptions/${sub.id}`);
    expect(recovered).toMatchObject({ status: 'active', retries: 0, next_cycle: 2, next_charge_at: '2027-04-30T12:00:00.000Z', charged_cycles: [{ cycle: 1, charges: 4 }] });
    const order = await orderOf(recovered.charged_cycles[0].order);
    expect(order).toMatchObject({ status: 'paid', subscription_cycle: 1 });
    expect(order.attempts.map((a: { status: string }) => a.status)).toEqual(['failed', 'failed', 'failed', 'succeeded']);
    const types = (await eventsOf(sub.id)).map((e) => e.type);
    expect(types).toEqual(['subscription.created', 'subscription.payment_failed', 'subscription.payment_failed', 'subscription.payment_failed', 'subscription.updated', 'subscription.charged']);
    const failures = (await eventsOf(sub.id)).filter((e) => e.type === 'subscription.payment_failed');
    expect(failures.map((e) => [e.data.attempt, e.data.decline_code])).toEqual([
      [1, 'authentication_required'],
      [2, 'authentication_required'],
      [3, 'authentication_required'],
    ]);
  });

  it('stops charging once the retries are spent: unpaid, or canceled as the merchant chose', async () => {
    const { clock, customer, card } = await onClock('2027-05-10T08:00:00.000Z', 'challenge');
    const unpaid = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 700, currency: 'EUR', reference: 'plan-unpaid', interval: 'week' });
    const canceled = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 700, currency: 'EUR', reference: 'plan-cancel', interval: 'week', after_failed_retries: 'cancel' });
    // Two weeks (the most a weekly subscription's clock advances at once) spend the retries; then nothing
    // bills on the clock, and it may go on two years at once.
    await advance(clock.id, '2027-05-24T08:00:00.000Z', '2027-06-10T08:00:00.000Z');
    expect(await ok('GET', `/v1/subscriptions/${unpaid.id}`)).toMatchObject({ status: 'unpaid', next_charge_at: null, retries: 3 });
    expect(await ok('GET', `/v1/subscriptions/${canceled.id}`)).toMatchObject({ status: 'canceled', cancellation_reason: 'payment_failed', next_charge_at: null });
    // Four charges of the one cycle each, and nothing after.
    for (const id of [unpaid.id, canceled.id]) expect((await ok('GET', `/v1/subscriptions/${id}`)).charged_cycles).toEqual([expect.objectContaining({ cycle: 1, charges: 4 })]);
    // An unpaid subscription comes back with a new card and a resume: its cycle in arrears stays failed,
    // the next cycle due after now is charged on its date.
    const fresh = await ok('POST', `/v1/customers/${customer.id}/cards`, { card: rawCard('approved') });
    await ok('POST', `/v1/subscriptions/${unpaid.id}`, { card: fresh.id });
    const back = await ok('POST', `/v1/subscriptions/${unpaid.id}/resume`);
    expect(back).toMatchObject({ status: 'active', next_cycle: 6, next_charge_at: '2027-06-14T08:00:00.000Z', retries: 0 });
    await advance(clock.id, '2027-06-14T09:00:00.000Z');
    expect((await ok('GET', `/v1/subscriptions/${unpaid.id}`)).charged_cycles.map((c: { cycle: number; charges: number }) => [c.cycle, c.charges])).toEqual([
      [1, 4],
      [6, 1],
    ]);
    expect((await call('POST', `/v1/subscriptions/${canceled.id}/resume`)).json().error.code).toBe('subscription_state_invalid');
  });

  it('lets a failed cycle\'s retries run on when canceled at the period\'s end, and ends a deleted customer\'s subscriptions', async () => {
    const { clock, customer, card } = await onClock('2027-08-10T08:00:00.000Z', 'challenge');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 300, currency: 'EUR', reference: 'plan-late', interval: 'month' });
    expect(sub.status).toBe('past_due');
    await ok('POST', `/v1/subscriptions/${sub.id}/cancel`, { at_period_end: true });
    await advance(clock.id, '2027-08-12T09:00:00.000Z');
    // The retry a day on was made (and failed): the flag did not cut the dunning short.
    expect(await ok('GET', `/v1/subscriptions/${sub.id}`)).toMatchObject({ status: 'past_due', cancel_at_period_end: true, retries: 1 });

    const deleted = await ok('POST', '/v1/customers', { email: 'gone@example.com', test_clock: clock.id });
    const goneCard = await ok('POST', `/v1/customers/${deleted.id}/cards`, { card: rawCard('approved') });
    const goneSub = await ok('POST', '/v1/subscriptions', { customer: deleted.id, card: goneCard.id, amount: 300, currency: 'EUR', reference: 'plan-gone', interval: 'week' });
    expect((await call('DELETE', `/v1/customers/${deleted.id}`)).statusCode).toBe(200);
    const after = (await svc.db.knex('subscriptions').where({ id: goneSub.id }).first()) as { status: string; cancellation_reason: string };
    expect(after).toMatchObject({ status: 'canceled', cancellation_reason: 'customer_deleted' });
    await advance(clock.id, '2027-09-10T09:00:00.000Z');
    expect(await svc.db.knex('orders').where({ subscription_id: goneSub.id })).toHaveLength(1);
  });

  it('lets one biller work on a clock at a time, and takes over a clock a stopped biller left', async () => {
    const { clock, customer, card } = await onClock('2027-08-20T08:00:00.000Z');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 250, currency: 'EUR', reference: 'plan-lease', interval: 'day' });
    await startAdvance(clock.id, '2027-08-22T08:00:00.000Z');
    // Another biller holds the clock (its lease runs for a minute yet): this one's step leaves it alone.
    await svc.db.knex('test_clocks').where({ id: clock.id }).update({ lease_until: new Date(Date.now() + 60_000) });
    expect(await svc.core.testClocks.step()).toBe(0);
    expect(await clockOf(clock.id)).toMatchObject({ status: 'advancing', frozen_time: '2027-08-20T08:00:00.000Z' });
    expect(await svc.db.knex('orders').where({ subscription_id: sub.id })).toHaveLength(1);
    // That biller stopped: once its lease has run out, the next step takes the clock over and finishes it.
    await svc.db.knex('test_clocks').where({ id: clock.id }).update({ lease_until: new Date(Date.now() - 1000) });
    await untilReady(clock.id);
    expect(await clockOf(clock.id)).toMatchObject({ status: 'ready', frozen_time: '2027-08-22T08:00:00.000Z' });
    expect(await svc.db.knex('orders').where({ subscription_id: sub.id })).toHaveLength(3);
  });

  it('cancels at the period’s end, pauses and resumes skipping the dates that passed, and ends after its cycles', async () => {
    const { clock, customer, card } = await onClock('2027-07-01T10:00:00.000Z');
    const ending = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 500, currency: 'EUR', reference: 'plan-end', interval: 'month' });
    await ok('POST', `/v1/subscriptions/${ending.id}/cancel`, { at_period_end: true });
    const paused = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 500, currency: 'EUR', reference: 'plan-pause', interval: 'month' });
    expect(await ok('POST', `/v1/subscriptions/${paused.id}/pause`)).toMatchObject({ status: 'paused', next_charge_at: null });
    const limited = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 500, currency: 'EUR', reference: 'plan-three', interval: 'month', cycles: 3, trial_days: 14 });
    expect(limited).toMatchObject({ status: 'trialing', next_charge_at: '2027-07-15T10:00:00.000Z', charged_cycles: [] });

    await advance(clock.id, '2027-09-01T10:00:00.000Z', '2027-10-20T10:00:00.000Z');
    expect(await ok('GET', `/v1/subscriptions/${ending.id}`)).toMatchObject({ status: 'canceled', cancellation_reason: 'requested', charged_cycles: [expect.objectContaining({ cycle: 1 })] });
    expect(await ok('GET', `/v1/subscriptions/${limited.id}`)).toMatchObject({ status: 'canceled', cancellation_reason: 'cycles_completed', next_cycle: 4 });
    expect((await ok('GET', `/v1/subscriptions/${limited.id}`)).charged_cycles.map((c: { cycle: number }) => c.cycle)).toEqual([1, 2, 3]);

    // Resumed on 20 October: cycles 2 to 4 (1 Aug, 1 Sep, 1 Oct) passed while paused and are skipped.
    const resumed = await ok('POST', `/v1/subscriptions/${paused.id}/resume`);
    expect(resumed).toMatchObject({ status: 'active', next_cycle: 5, next_charge_at: '2027-11-01T10:00:00.000Z' });
    expect((await call('POST', `/v1/subscriptions/${ending.id}/pause`)).json().error.code).toBe('subscription_state_invalid');
  });
});

describe('test clock advances: bounded, in the background, one per clock and a few per merchant', () => {
  const ordersOf = async (subscriptionId: string) => (await svc.db.knex('orders').where({ subscription_id: subscriptionId })).length;
  const readyEvents = (clockId: string) => svc.db.knex('events').where({ subject_type: 'test_clock', subject_id: clockId }).orderBy('sequence');

  it('answers the advance at once with the clock advancing and runs nothing in the request; the biller’s bounded steps take it to ready, with test_clock.ready', async () => {
    const { clock, customer, card } = await onClock('2027-10-01T08:00:00.000Z');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 400, currency: 'EUR', reference: 'plan-async', interval: 'day' });
    expect(await ordersOf(sub.id)).toBe(1);

    const started = await startAdvance(clock.id, '2027-10-03T08:00:00.000Z');
    // The answer, and the clock after it: advancing, still at its time, nothing charged on the way yet.
    expect(started).toMatchObject({ frozen_time: '2027-10-01T08:00:00.000Z', target_frozen_time: '2027-10-03T08:00:00.000Z' });
    expect(await clockOf(clock.id)).toMatchObject({ status: 'advancing', frozen_time: '2027-10-01T08:00:00.000Z' });
    expect(await ordersOf(sub.id)).toBe(1);

    // A step does a bounded amount of work (one charge here) and shows how far the clock got.
    expect(await svc.core.testClocks.step({ chargesPerClock: 1 })).toBe(0);
    expect(await clockOf(clock.id)).toMatchObject({ status: 'advancing', frozen_time: '2027-10-02T08:00:00.000Z' });
    expect(await ordersOf(sub.id)).toBe(2);
    expect(await readyEvents(clock.id)).toEqual([]);

    await untilReady(clock.id);
    expect(await clockOf(clock.id)).toMatchObject({ status: 'ready', frozen_time: '2027-10-03T08:00:00.000Z', target_frozen_time: null });
    expect(await ordersOf(sub.id)).toBe(3);
    const events = await readyEvents(clock.id);
    expect(events.map((e) => e.type)).toEqual(['test_clock.ready']);
    expect(events[0].data).toMatchObject({ id: clock.id, status: 'ready', frozen_time: '2027-10-03T08:00:00.000Z' });
    // Told after the charges it ran: the event log orders by time, and the ready event is dated at the target.
    const charged = await svc.db.knex('events').where({ subject_type: 'subscription', subject_id: sub.id, type: 'subscription.charged' });
    for (const e of charged) expect(new Date(e.created_at).getTime()).toBeLessThanOrEqual(new Date(events[0].created_at).getTime());
  });

  it('refuses an advance of years: at most two periods of the shortest subscription billing on the clock (Stripe’s rule), two years with none', async () => {
    const { clock, customer, card } = await onClock('2027-11-01T08:00:00.000Z');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 900, currency: 'EUR', reference: 'plan-years', interval: 'month' });
    const years = await call('POST', `/v1/test_helpers/test_clocks/${clock.id}/advance`, { to: '2032-10-01T08:00:00.000Z' });
    expect(years.statusCode).toBe(400);
    expect(years.json().error).toMatchObject({ code: 'test_clock_invalid', param: 'to', message: expect.stringContaining('two periods of its shortest subscription (1 month)') });
    expect(years.json().error.message).toContain('2028-01-01T08:00:00.000Z');
    expect(await clockOf(clock.id)).toMatchObject({ status: 'ready', frozen_time: '2027-11-01T08:00:00.000Z' });
    expect(await ordersOf(sub.id)).toBe(1);
    // A clock on which nothing bills goes up to two years at once, not further.
    const bare = await ok('POST', '/v1/test_helpers/test_clocks', { frozen_time: '2027-11-01T08:00:00.000Z' });
    expect((await call('POST', `/v1/test_helpers/test_clocks/${bare.id}/advance`, { to: '2029-11-01T08:00:01.000Z' })).json().error).toMatchObject({ code: 'test_clock_invalid', param: 'to' });
    await startAdvance(bare.id, '2029-11-01T08:00:00.000Z');
    await untilReady(bare.id);
  });

  it('runs one advance of a clock at a time: a second is 409 test_clock_advancing, and no subscription on it starts or resumes meanwhile', async () => {
    const { clock, customer, card } = await onClock('2027-12-01T08:00:00.000Z');
    const paused = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 300, currency: 'EUR', reference: 'plan-paused', interval: 'day' });
    await ok('POST', `/v1/subscriptions/${paused.id}/pause`);
    const keyed = (to: string) =>
      svc.app.inject({
        method: 'POST',
        url: `/v1/test_helpers/test_clocks/${clock.id}/advance`,
        headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', 'idempotency-key': `advance-${clock.id}` },
        payload: JSON.stringify({ to }),
      });
    const first = await keyed('2027-12-15T08:00:00.000Z');
    expect(first.json()).toMatchObject({ status: 'advancing', target_frozen_time: '2027-12-15T08:00:00.000Z' });
    // A retry of the same request (its Idempotency-Key) gets the same answer; another advance does not start.
    const retried = await keyed('2027-12-15T08:00:00.000Z');
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.json()).toEqual(first.json());
    const again = await call('POST', `/v1/test_helpers/test_clocks/${clock.id}/advance`, { to: '2027-12-20T08:00:00.000Z' });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'test_clock_advancing', param: 'id', message: expect.stringContaining('advance it again once its status is ready') });
    // A daily subscription joining a two-year advance would run hundreds of cycles in it: refused until ready.
    const joining = await call('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 300, currency: 'EUR', reference: 'plan-late', interval: 'day' });
    expect(joining.statusCode).toBe(409);
    expect(joining.json().error.code).toBe('test_clock_advancing');
    expect((await call('POST', `/v1/subscriptions/${paused.id}/resume`)).json().error.code).toBe('test_clock_advancing');
    expect(await svc.db.knex('subscriptions').where({ customer_id: customer.id })).toHaveLength(1);
    await untilReady(clock.id);
    expect((await call('POST', `/v1/subscriptions/${paused.id}/resume`)).statusCode).toBe(200);
    await startAdvance(clock.id, '2027-12-16T08:00:00.000Z');
    await untilReady(clock.id);
  });

  it('holds a merchant to five clocks advancing at once, under concurrent requests (429 too_many_advancing_test_clocks); another merchant is not held by it', async () => {
    const busy = await svc.sandbox('Busy clocks');
    const other = await svc.sandbox('Other clocks');
    const newClock = async (key: string) => {
      const res = await call('POST', '/v1/test_helpers/test_clocks', { frozen_time: '2028-01-01T00:00:00.000Z' }, key);
      expect(res.statusCode, res.body).toBe(201);
      return res.json().id as string;
    };
    const clocks = [];
    for (let i = 0; i < 8; i++) clocks.push(await newClock(busy.test_secret_key));
    const answers = await Promise.all(clocks.map((id) => call('POST', `/v1/test_helpers/test_clocks/${id}/advance`, { to: '2028-02-01T00:00:00.000Z' }, busy.test_secret_key)));
    expect(answers.filter((r) => r.statusCode === 200)).toHaveLength(5);
    const refused = answers.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(3);
    expect(refused[0]!.json().error).toMatchObject({ type: 'invalid_request_error', code: 'too_many_advancing_test_clocks', message: expect.stringContaining('at most 5 advance at once') });
    expect(await svc.db.knex('test_clocks').whereIn('id', clocks).where({ status: 'advancing' })).toHaveLength(5);
    // Another merchant's clocks advance meanwhile.
    const theirs = await newClock(other.test_secret_key);
    await startAdvance(theirs, '2028-02-01T00:00:00.000Z', other.test_secret_key);
    // Once one is ready, there is room for another.
    const waiting = clocks[answers.findIndex((r) => r.statusCode === 429)]!;
    const first = clocks[answers.findIndex((r) => r.statusCode === 200)]!;
    await untilReady(first);
    await startAdvance(waiting, '2028-02-01T00:00:00.000Z', busy.test_secret_key);
    for (const id of [...clocks, theirs]) await untilReady(id);
  });

  it('is run by the biller worker on its own, every second', async () => {
    const { clock, customer, card } = await onClock('2028-02-01T08:00:00.000Z');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 500, currency: 'EUR', reference: 'plan-worker', interval: 'week' });
    const warnings: unknown[] = [];
    const log = { debug: () => undefined, info: () => undefined, warn: (line: string, err?: unknown) => warnings.push([line, err]), error: () => undefined, debugEnabled: () => false };
    // Only what the biller reads; the other workers' parts are not started here.
    const ctx = { config: loadConfig({}), knex: svc.db.knex, installationId: 'test', events: undefined, billing: svc.core.billing, testClocks: svc.core.testClocks, log } as unknown as WorkerContext;
    const [biller] = startWorkers(['biller'], ctx);
    try {
      await startAdvance(clock.id, '2028-02-15T08:00:00.000Z');
      await waitFor('the biller worker to finish the advance', () => clockOf(clock.id), (c) => c.status === 'ready', 60_000, 100);
    } finally {
      await biller!.stop(new AbortController().signal);
    }
    expect(await ordersOf(sub.id)).toBe(3);
    expect(warnings).toEqual([]);
  });
});

describe('exactly once', () => {
  it('charges each cycle once with two schedulers at once, and after a crash between a charge and its bookkeeping', async () => {
    const { clock, customer, card } = await onClock('2027-09-15T06:00:00.000Z');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 1200, currency: 'EUR', reference: 'plan-once', interval: 'day' });
    expect(sub.charged_cycles).toHaveLength(1);
    // Two schedulers at the same instant of cycle 2.
    const at = { now: () => new Date('2027-09-16T06:00:00.000Z') };
    const results = await Promise.all([svc.core.billing.chargeDue(sub.id, at), svc.core.billing.chargeDue(sub.id, at), svc.core.billing.chargeDue(sub.id, at)]);
    expect(results.filter((r) => r === 'charged')).toHaveLength(1);
    // A process that stops after charging cycle 3 and before taking the outcome in: its bookkeeping fails.
    const at3 = { now: () => new Date('2027-09-17T06:00:00.000Z') };
    await svc.db.knex.raw(`CREATE FUNCTION stop_bookkeeping() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'process stopped'; END $$`);
    await svc.db.knex.raw(`CREATE TRIGGER stop_bookkeeping BEFORE UPDATE ON subscriptions FOR EACH ROW WHEN (NEW.next_cycle = 4) EXECUTE FUNCTION stop_bookkeeping()`);
    await expect(svc.core.billing.chargeDue(sub.id, at3)).rejects.toThrow();
    await svc.db.knex.raw('DROP TRIGGER stop_bookkeeping ON subscriptions');
    await svc.db.knex.raw('DROP FUNCTION stop_bookkeeping()');
    const cycle3 = await svc.db.knex('subscription_cycles').where({ subscription_id: sub.id, cycle: 3 }).first();
    expect(cycle3).toMatchObject({ charges_started: 1, charges_recorded: 0 });
    expect((await orderOf(cycle3.order_id)).status).toBe('paid');
    // The restart takes the paid order in without charging again.
    expect(await svc.core.billing.chargeDue(sub.id, at3)).toBe('charged');
    const after = await ok('GET', `/v1/subscriptions/${sub.id}`);
    expect(after.charged_cycles.map((c: { cycle: number; charges: number }) => [c.cycle, c.charges])).toEqual([
      [1, 1],
      [2, 1],
      [3, 1],
    ]);
    for (const c of after.charged_cycles) expect(await svc.db.knex('payments').where({ order_id: c.order, status: 'succeeded' })).toHaveLength(1);
    expect(await svc.db.knex('orders').where({ subscription_id: sub.id })).toHaveLength(3);
    // Then the clock catches up cycle by cycle, two days (two periods of the daily subscription) at a time.
    await advance(clock.id, '2027-09-17T06:00:00.000Z', '2027-09-19T06:00:00.000Z', '2027-09-20T07:00:00.000Z');
    expect((await ok('GET', `/v1/subscriptions/${sub.id}`)).charged_cycles).toHaveLength(6);
    expect(svc.internalErrors).toEqual([]);
  });

  it('keeps subscriptions to their merchant and mode, and test clocks to test mode', async () => {
    const { customer, card } = await onClock('2027-12-01T00:00:00.000Z');
    const sub = await ok('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 100, currency: 'EUR', reference: 'private', interval: 'year' });
    const other = await svc.sandbox('Other subscriptions');
    expect((await call('GET', `/v1/subscriptions/${sub.id}`, undefined, other.test_secret_key)).statusCode).toBe(404);
    expect((await call('POST', `/v1/subscriptions/${sub.id}/cancel`, {}, other.test_secret_key)).statusCode).toBe(404);
    expect((await call('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 100, currency: 'EUR', reference: 'x', interval: 'year' }, other.test_secret_key)).json().error).toMatchObject({ param: 'customer' });
    expect((await call('POST', '/v1/test_helpers/test_clocks', {}, shop.live_secret_key)).json().error.code).toBe('test_mode_only');
    expect((await call('POST', '/v1/subscriptions', { customer: customer.id, card: card.id, amount: 100, currency: 'EUR', reference: 'x', interval: 'fortnight' })).json().error).toMatchObject({ code: 'schedule_invalid', param: 'interval' });
  });

  it('never echoes a card number sent where an id or a name belongs, and keeps the cycles\' keys to itself', async () => {
    const { customer } = await onClock('2027-12-02T00:00:00.000Z');
    const number = cardNumber('approved');
    const answers = [
      await call('POST', '/v1/subscriptions', { customer: customer.id, card: number, amount: 100, currency: 'EUR', reference: 'x', interval: 'year' }),
      await call('POST', `/v1/customers/${customer.id}/cards`, { token: number }),
      await call('POST', `/v1/customers/${customer.id}/cards`, { card: { ...rawCard('approved'), [number]: 1 } }),
      await call('GET', `/v1/customers/${number}`),
    ];
    for (const res of answers) {
      expect(res.statusCode).toBeGreaterThanOrEqual(400);
      expect(res.body).not.toContain(number);
      expect(res.body).not.toContain(number.slice(0, 12));
    }
    expect(answers[0]!.json().error.message).toContain(`••••${number.slice(-4)}`);
    // A merchant's key cannot take a subscription cycle's order key.
    const hijack = await svc.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', 'idempotency-key': 'subscription_cycle:sub_x:2' },
      payload: JSON.stringify({ amount: 100, currency: 'EUR', reference: 'hijack' }),
    });
    expect(hijack.json().error).toMatchObject({ code: 'idempotency_key_invalid' });
  });
});
