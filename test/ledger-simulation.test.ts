// A small simulation in the spirit of TigerBeetle's: seeded random interleavings of payments, refunds,
// voids and settlement runs, run concurrently against the real Postgres, then every invariant checked: the ledger's
// (checkout ledger verify), the orders' against their refunds, and the outbox's events against the
// orders' versions. fast-check generates the schedules and, on a failure, shrinks to a smaller one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { payWithTestCard } from './support/payments.ts';
import type { SandboxCredentials } from '../src/application/merchant/create-sandbox.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Simulation shop');
});
afterAll(async () => {
  await svc?.close();
});

/** One step of a schedule, on the order at `order` (an index into the run's orders). */
type Step =
  | { kind: 'card'; order: number; card: 'approved' | 'soft_decline' | 'hard_decline' }
  | { kind: 'transfer'; order: number }
  | { kind: 'refund'; order: number; amount: number | undefined }
  | { kind: 'void'; order: number }
  | { kind: 'settle'; order: number };

const ORDERS = 4;
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant('card' as const), order: fc.nat(ORDERS - 1), card: fc.constantFrom('approved' as const, 'soft_decline' as const, 'hard_decline' as const) }),
  fc.record({ kind: fc.constant('transfer' as const), order: fc.nat(ORDERS - 1) }),
  fc.record({ kind: fc.constant('refund' as const), order: fc.nat(ORDERS - 1), amount: fc.option(fc.integer({ min: 1, max: 1500 }), { nil: undefined }) }),
  fc.record({ kind: fc.constant('void' as const), order: fc.nat(ORDERS - 1) }),
  fc.record({ kind: fc.constant('settle' as const), order: fc.nat(ORDERS - 1) }),
);
/** A schedule: rounds of steps; the steps of a round run at the same time. */
const schedule = fc.array(fc.array(step, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 5 });

const auth = () => ({ authorization: `Bearer ${shop.test_secret_key}` });

async function run(step: Step, orderIds: readonly string[], serial: number): Promise<number> {
  const id = orderIds[step.order]!;
  switch (step.kind) {
    case 'card':
      return payWithTestCard(svc.core.routes, shop, id, { behaviour: step.card, submissionId: `sim-${serial}` }).then(
        () => 200,
        () => 400,
      );
    case 'transfer':
      return (await svc.app.inject({ method: 'POST', url: `/v1/test_helpers/orders/${id}/simulate_transfer`, headers: auth() })).statusCode;
    case 'refund':
      return (
        await svc.app.inject({
          method: 'POST',
          url: `/v1/orders/${id}/refunds`,
          headers: { ...auth(), 'content-type': 'application/json' },
          payload: JSON.stringify({ reason: 'other', ...(step.amount === undefined ? {} : { amount: step.amount }) }),
        })
      ).statusCode;
    case 'void':
      return (await svc.app.inject({ method: 'POST', url: `/v1/orders/${id}/void`, headers: auth() })).statusCode;
    case 'settle':
      return (await svc.app.inject({ method: 'POST', url: '/v1/test_helpers/payouts/run', headers: auth() })).statusCode;
  }
}

describe('random interleavings of payments, refunds, voids and settlement', () => {
  it('keep every invariant of the ledger, the orders and the outbox', async () => {
    let serial = 0;
    await fc.assert(
      fc.asyncProperty(schedule, async (rounds) => {
        const orderIds: string[] = [];
        for (let i = 0; i < ORDERS; i++) {
          const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { ...auth(), 'content-type': 'application/json' }, payload: orderBody({ amount: 3000, line_items: [], reference: `sim-${serial}-${i}` }) });
          orderIds.push(res.json().id);
        }
        for (const round of rounds) {
          const statuses = await Promise.all(round.map((s) => run(s, orderIds, ++serial)));
          // Refusals are expected (an unpaid order, more than remains, a lost race); a fault of ours is not.
          for (const status of statuses) expect(status).toBeLessThan(500);
        }
        expect(await svc.core.ledger.verify()).toBeUndefined();
        for (const id of orderIds) {
          const order = await svc.db.knex('orders').where({ id }).first();
          const refunds = await svc.db.knex('refunds').where({ order_id: id });
          const succeeded = refunds.filter((r) => r.status === 'succeeded').reduce((sum, r) => sum + Number(r.amount), 0);
          expect(Number(order.amount_refunded)).toBe(succeeded);
          expect(Number(order.amount_refund_pending)).toBe(0);
          expect(succeeded).toBeLessThanOrEqual(3000);
          const paid = await svc.db.knex('payments').where({ order_id: id }).whereIn('status', ['succeeded', 'reversed']);
          expect(paid.length).toBeLessThanOrEqual(1);
          // Every state change wrote its event: the order's events are numbered 1..version, once each.
          const events = await svc.db.knex('events').where({ subject_type: 'order', subject_id: id }).orderBy('sequence');
          expect(events.map((e) => e.sequence)).toEqual(Array.from({ length: order.version }, (_, i) => i + 1));
          expect(events.filter((e) => e.type === 'order.refunded')).toHaveLength(refunds.filter((r) => r.status === 'succeeded').length);
          expect(events.filter((e) => e.type === 'order.voided')).toHaveLength(order.status === 'voided' ? 1 : 0);
        }
        expect(svc.internalErrors).toEqual([]);
      }),
      { seed: Number(process.env.SIMULATION_SEED ?? 20261123), numRuns: Number(process.env.SIMULATION_RUNS ?? 12), endOnFailure: true },
    );
  }, 300_000);
});
