// Database errors become the ports' errors inside the adapters: a unique constraint or a version that another
// request won is a ConflictError (409 concurrent_change at the edge), never an internal error.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code } from '@connectrpc/connect';
import { PostgresOrderRepository } from '../src/modules/order/adapters/postgres/postgres-order-repository.ts';
import { PostgresPaymentRepository } from '../src/modules/payment/adapters/postgres/postgres-payment-repository.ts';
import { receivedTransfer } from '../src/modules/payment/domain/payment.entity.ts';
import { toConnectError } from '../src/kernel/application/connect-errors.ts';
import { ConflictError } from '../src/kernel/ports/errors.ts';
import { retryingDeadlocks, translateErrors } from '../src/kernel/adapters/postgres/database.ts';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

let svc: TestService;
let orderId: string;

beforeAll(async () => {
  svc = await startTestService();
  const shop = await svc.sandbox('Conflicts shop');
  const res = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' }, payload: orderBody() });
  orderId = res.json().id;
});
afterAll(async () => {
  await svc?.close();
});

describe('database errors translated in the adapters', () => {
  it('a transition computed from a version another request moved on is a ConflictError, answered 409 concurrent_change', async () => {
    const orders = new PostgresOrderRepository(svc.db.knex);
    const order = (await orders.findForCheckout(orderId))!;
    await orders.saveTransition({ ...order, status: 'failed', version: order.version + 1 });
    const stale = orders.saveTransition({ ...order, status: 'failed', version: order.version + 1 });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    const answered = toConnectError(await stale.catch((err: unknown) => err), () => {
      throw new Error('a conflict is not an internal error');
    });
    expect(answered.code).toBe(Code.Aborted);
    expect(answered.rawMessage).toMatch(/changed while this request ran.*retry/);
  });

  it('a unique constraint another request claimed first is a ConflictError that says what it means', async () => {
    const merchantId = (await svc.db.knex('orders').where({ id: orderId }).first()).merchant_id as string;
    const payments = new PostgresPaymentRepository(svc.db.knex);
    const transfer = (n: number) =>
      receivedTransfer({ paymentId: `pay_transfer${n}`, attemptId: `att_transfer${n}`, orderId, merchantId, livemode: false, amount: 2500n, currency: 'EUR', now: new Date() });
    await payments.start(transfer(1));
    const second = payments.start(transfer(2));
    await expect(second).rejects.toBeInstanceOf(ConflictError);
    await expect(second).rejects.toThrow('The order has been paid by another payment.');
    // The payment was written past the use case (no ledger posting): take it away so the ledger verifies.
    await svc.db.knex('payment_attempts').where({ payment_id: 'pay_transfer1' }).delete();
    await svc.db.knex('payments').where({ id: 'pay_transfer1' }).delete();
  });

  it('a deadlock is a ConflictError, and a transaction of its own is run again when it was the victim', async () => {
    const knex = svc.db.knex;
    await knex.raw('CREATE TABLE deadlock_probe (id int PRIMARY KEY, n int NOT NULL)');
    await knex('deadlock_probe').insert([{ id: 1, n: 0 }, { id: 2, n: 0 }]);
    // Two transactions lock rows 1 and 2 in opposite orders; each waits for the other to hold its first row.
    let held = 0;
    const bothHold = new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (held === 2) {
          clearInterval(check);
          resolve();
        }
      }, 5);
    });
    const lockInOrder = (first: number, second: number, runs: { count: number }, rerunAfter?: Promise<unknown>) =>
      knex.transaction(async (trx) => {
        runs.count++;
        // A run again starts once the other transaction has ended: started at once, it could take its first row before
        // the other gets it, and the two would deadlock a second time (seen on a loaded machine: three runs).
        if (runs.count > 1) await rerunAfter;
        await trx('deadlock_probe').where({ id: first }).increment('n', 1);
        if (runs.count === 1) {
          held++;
          await bothHold;
        }
        await trx('deadlock_probe').where({ id: second }).increment('n', 1);
      });
    const plain = { count: 0 };
    const retried = { count: 0 };
    const plainRun = translateErrors(() => lockInOrder(1, 2, plain));
    const ended = plainRun.then(
      () => undefined,
      () => undefined,
    );
    const results = await Promise.allSettled([plainRun, translateErrors(() => retryingDeadlocks(() => lockInOrder(2, 1, retried, ended)))]);
    // Postgres picks one victim. If it is the plain one, it is a ConflictError; if it is the retried one, its second run succeeds.
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length === 1) {
      expect((failed[0] as PromiseRejectedResult).reason).toBeInstanceOf(ConflictError);
      expect(plain.count).toBe(1);
    } else {
      expect(failed).toHaveLength(0);
      expect(retried.count).toBe(2);
    }
    const rows = await knex('deadlock_probe').orderBy('id');
    expect(rows.map((r) => r.n)).toEqual(failed.length === 1 ? [1, 1] : [2, 2]);
  });
});
