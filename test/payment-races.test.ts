// Races between the ways an order can be paid or ended, on the real Postgres: a challenge left open
// while a transfer pays the order or the order expires, and captures that cannot be recorded.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Code } from '@connectrpc/connect';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { createPayments } from '../src/modules/payment/application/payments.ts';
import type { PaymentInstrument } from '../src/modules/payment/application/payment-instrument.ts';
import type { PaymentOutcome } from '../src/modules/payment/application/payment-outcome.ts';
import { authorizeCheckout, type CheckoutCredential } from '../src/modules/checkout/application/checkout-authorization.ts';
import { orderIdOfCheckout } from '../src/modules/order/domain/order.entity.ts';
import { PostgresPaymentRepository } from '../src/modules/payment/adapters/postgres/postgres-payment-repository.ts';
import { parseCard } from '../src/modules/payment/domain/card.ts';
import { DEFAULT_VELOCITY_LIMITS } from '../src/modules/payment/domain/velocity.ts';
import type { Order } from '../src/modules/order/domain/order.entity.ts';
import type { AuthorizationOutcome, AuthorizationRequest, OperationOutcome, PaymentProcessor, ProcessorCapabilities } from '../src/modules/payment/ports/payment-processor.port.ts';
import { PostgresUnitOfWork } from '../src/kernel/adapters/postgres/postgres-unit-of-work.ts';
import { postgresScope } from '../src/composition/modules.ts';
import { PostgresOrderRepository } from '../src/modules/order/adapters/postgres/postgres-order-repository.ts';
import { simulatedAlpha, simulatedBeta } from '../src/modules/payment/adapters/simulator/simulated-routes.ts';
import { cryptoIdGenerator } from '../src/kernel/adapters/node/crypto-id-generator.ts';
import { insertLeftBehind, processingAttempt, type TestService } from './support/service.ts';
import { startTestShop, type TestShop } from './support/test-shop.ts';

/** The sandbox shop this suite pays with, and its builders (test/support/test-shop.ts). */
let t: TestShop;
let svc: TestService;

beforeAll(async () => {
  t = await startTestShop('Races shop');
  svc = t.svc;
});
afterAll(async () => {
  await t?.svc.close();
});

const challenge = (checkoutId: string, token: string, attemptId: string, code = '123456') =>
  t.checkout.completeAuthentication({ checkoutId, attemptId, code }, { headers: { 'checkout-token': token } });

describe('a challenge left open (through the Connect API)', () => {
  it('a transfer that pays the order cancels the challenge; completing it then captures nothing', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    const first = (await t.checkout.submitCardPayment({ checkoutId, submissionId: 'sub-1', card: t.card('challenge') }, { headers: { 'checkout-token': token } })).outcome!;
    expect(first.status).toBe(PaymentStatus.REQUIRES_AUTHENTICATION);

    const transfer = await t.simulateTransfer(id);
    expect(transfer.statusCode).toBe(200);
    expect(transfer.json()).toMatchObject({ status: 'paid', method: 'bank_transfer' });
    const card3ds = (await t.attemptsOf(id)).find((a) => a.id === first.challenge!.attemptId);
    expect(card3ds).toMatchObject({ status: 'canceled', cancellation_reason: 'order_paid' });

    // Before the fix this captured the card and answered 500 (payment_attempts_one_success).
    const done = (await challenge(checkoutId, token, first.challenge!.attemptId)).outcome!;
    expect(done.status).toBe(PaymentStatus.SUCCEEDED);
    expect(done.checkout?.receipt?.method).toBe('bank_transfer');
    const attempts = await t.attemptsOf(id);
    expect(attempts.map((a) => [a.method, a.status])).toEqual([
      ['card', 'canceled'],
      ['bank_transfer', 'succeeded'],
    ]);
    expect(await t.eventTypes(id)).toEqual(['order.created', 'order.paid']);
    expect(svc.internalErrors).toEqual([]);
  });

  it('CompleteRedirect, without a token: altered return parameters decline and capture nothing; an attempt of another checkout is not found; the issuer\'s own answer pays', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    const first = (await t.checkout.submitCardPayment({ checkoutId, submissionId: 'sub-redirect', card: t.card('challenge') }, { headers: { 'checkout-token': token } })).outcome!;
    const attemptId = first.challenge!.attemptId;
    expect(first.challenge).toMatchObject({ redirectMethod: 'GET', redirectUrl: expect.stringContaining('/simulator/issuer/alpha_') });
    // The issuer's answer, as its page would send it to the return leg.
    const issuerUrl = new URL(first.challenge!.redirectUrl);
    const ref = decodeURIComponent(issuerUrl.pathname.split('/').at(-1)!);
    const back = new URL(svc.core.simulatedIssuer.answer(ref, Object.fromEntries(issuerUrl.searchParams), '123456')!);
    expect(back.pathname).toBe(`/c/${checkoutId}/return/${attemptId}`);
    const params = Object.fromEntries(back.searchParams);

    const other = await t.createOrder();
    await expect(t.checkout.completeRedirect({ checkoutId: other.checkoutId, attemptId, params })).rejects.toMatchObject({ code: Code.NotFound });
    const forged = (await t.checkout.completeRedirect({ checkoutId, attemptId, params: { ...params, sig: '0'.repeat(64) } })).outcome!;
    expect(forged).toMatchObject({ status: PaymentStatus.FAILED, declineCode: 'authentication_failed' });
    expect((await t.attemptsOf(id))[0]).toMatchObject({ status: 'failed', authentication: 'failed' });

    // A new submission's challenge, answered by the issuer: paid through the return leg's parameters alone.
    const second = (await t.checkout.submitCardPayment({ checkoutId, submissionId: 'sub-redirect-2', card: t.card('challenge') }, { headers: { 'checkout-token': token } })).outcome!;
    const url2 = new URL(second.challenge!.redirectUrl);
    const back2 = new URL(svc.core.simulatedIssuer.answer(decodeURIComponent(url2.pathname.split('/').at(-1)!), Object.fromEntries(url2.searchParams), '123456')!);
    const paid = (await t.checkout.completeRedirect({ checkoutId, attemptId: second.challenge!.attemptId, params: Object.fromEntries(back2.searchParams) })).outcome!;
    expect(paid.status).toBe(PaymentStatus.SUCCEEDED);
    expect((await t.attemptsOf(id)).map((a) => [a.status, a.authentication])).toEqual([
      ['failed', 'failed'],
      ['succeeded', 'passed'],
    ]);
  });

  it('an order that expires while the challenge is open refuses the answer as expired, captures nothing', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    const first = (await t.checkout.submitCardPayment({ checkoutId, submissionId: 'sub-1', card: t.card('challenge') }, { headers: { 'checkout-token': token } })).outcome!;
    await svc.db.knex('orders').where({ id }).update({ expires_at: new Date(Date.now() - 1000) });
    expect(await svc.core.payments.expireDue(100)).toBeGreaterThanOrEqual(1);
    expect((await t.attemptsOf(id))[0]).toMatchObject({ status: 'canceled', cancellation_reason: 'order_expired' });

    // Before the fix: 500 "illegal order transition expired -> paid", after a capture.
    await expect(challenge(checkoutId, token, first.challenge!.attemptId)).rejects.toMatchObject({ code: Code.FailedPrecondition, rawMessage: 'This checkout has expired.' });
    expect((await t.attemptsOf(id))[0]).toMatchObject({ status: 'canceled' });
    expect(await t.eventTypes(id)).toEqual(['order.created', 'order.expired']);
  });

  it('an order past its time with no sweep yet: the answer expires it under the lock and captures nothing', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    const first = (await t.checkout.submitCardPayment({ checkoutId, submissionId: 'sub-1', card: t.card('challenge') }, { headers: { 'checkout-token': token } })).outcome!;
    await svc.db.knex('orders').where({ id }).update({ expires_at: new Date(Date.now() - 1000) });
    await expect(challenge(checkoutId, token, first.challenge!.attemptId)).rejects.toMatchObject({ code: Code.FailedPrecondition });
    expect((await t.attemptsOf(id))[0]).toMatchObject({ status: 'canceled', cancellation_reason: 'order_expired' });
    expect(await t.eventTypes(id)).toEqual(['order.created', 'order.expired']);
  });
});

/** A simulated acquirer that counts what it is asked and lets a test act in the middle of a capture. */
class RecordingAcquirer implements PaymentProcessor {
  readonly calls: Array<{ op: string; ref: string }> = [];
  onCapture: (() => Promise<void>) | undefined;
  failReversals = 0;
  /** How many coming authorizations answer pending (the processor has not decided), keeping the route's reference. */
  pendingAuthorizations = 0;
  readonly #inner: PaymentProcessor;

  constructor(inner: PaymentProcessor) {
    this.#inner = inner;
  }
  get route(): string {
    return this.#inner.route;
  }
  get capabilities(): ProcessorCapabilities {
    return this.#inner.capabilities;
  }
  async authorize(request: AuthorizationRequest): Promise<AuthorizationOutcome> {
    const answer = await this.#inner.authorize(request);
    if (this.pendingAuthorizations > 0 && answer.kind === 'approved') {
      this.pendingAuthorizations -= 1;
      return { kind: 'pending', processorRef: answer.processorRef };
    }
    return answer;
  }
  completeAuthorization(ref: string, params: Readonly<Record<string, string>>): Promise<AuthorizationOutcome> {
    return this.#inner.completeAuthorization(ref, params);
  }
  async capture(ref: string, amount: bigint, reference: string): Promise<OperationOutcome> {
    this.calls.push({ op: 'capture', ref });
    await this.onCapture?.();
    return this.#inner.capture(ref, amount, reference);
  }
  void(ref: string, reference: string): Promise<OperationOutcome> {
    this.calls.push({ op: 'void', ref });
    return this.#inner.void(ref, reference);
  }
  refund(ref: string, amount: bigint, reference: string): Promise<OperationOutcome> {
    this.calls.push({ op: 'refund', ref });
    return this.#inner.refund(ref, amount, reference);
  }
  async reverse(ref: string, amount: bigint, reference: string): Promise<OperationOutcome> {
    this.calls.push({ op: 'reverse', ref });
    if (this.failReversals > 0) {
      this.failReversals -= 1;
      throw new Error('acquirer unreachable');
    }
    return this.#inner.reverse(ref, amount, reference);
  }
  sync(ref: string): Promise<AuthorizationOutcome> {
    return this.#inner.sync(ref);
  }
  syncRefund(ref: string): Promise<OperationOutcome> {
    return this.#inner.syncRefund(ref);
  }
}

describe('captures that cannot be recorded (the engine with a recording acquirer)', () => {
  let engine: {
    pay(checkoutId: string, credential: CheckoutCredential, submissionId: string, instrument: PaymentInstrument, client: { address: string }): Promise<PaymentOutcome>;
    receiveTransfer(order: Order): Promise<Order>;
    recoverAttempts(limit: number): Promise<number>;
    expireDue(limit: number): Promise<number>;
  };
  let alpha: RecordingAcquirer;
  let offsetMs = 0;
  const backgroundErrors: unknown[] = [];

  beforeAll(() => {
    alpha = new RecordingAcquirer(simulatedAlpha(svc.core.merchants));
    const uow = new PostgresUnitOfWork(svc.db.knex, postgresScope);
    const payments = createPayments({
      uow,
      reads: { orders: new PostgresOrderRepository(svc.db.knex), payments: new PostgresPaymentRepository(svc.db.knex) },
      ids: cryptoIdGenerator,
      clock: { now: () => new Date(Date.now() + offsetMs) },
      merchants: svc.core.merchants,
      testCards: svc.core.merchants,
      processors: { test: [alpha, simulatedBeta(svc.core.merchants)], live: [] },
      velocity: DEFAULT_VELOCITY_LIMITS,
      onBackgroundError: (err) => backgroundErrors.push(err),
    });
    // The page's side of the use cases, and the server's: the test drives both over the recording acquirer.
    engine = {
      pay: (checkoutId, credential, submissionId, instrument, client) =>
        payments.payOrder({ orderId: orderIdOfCheckout(checkoutId), authorize: (order) => authorizeCheckout(order, credential, new Date()), submissionId, instrument, client }),
      receiveTransfer: (order) => uow.run((tx, afterCommit) => payments.receiveTransfer(tx, afterCommit, order.id)),
      recoverAttempts: payments.recoverAttempts,
      expireDue: payments.expireDue,
    };
  });

  const orderRow = async (id: string): Promise<Order> => (await new PostgresOrderRepository(svc.db.knex).findForCheckout(id))!;
  const approvedCard = () => ({ method: 'card' as const, card: parseCard(t.card('approved'), new Date()) });

  it('a capture that loses to a transfer is reversed at once and reported with order.payment_reversed', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    // The race the lock cannot rule out: the acquirer stalls past the stale limit and a transfer pays the order meanwhile.
    alpha.onCapture = async () => {
      alpha.onCapture = undefined;
      await svc.db.knex('payment_attempts').where({ order_id: id, status: 'processing' }).update({ updated_at: new Date(Date.now() - 3 * 60_000) });
      await engine.receiveTransfer(await orderRow(id));
    };
    const calls = alpha.calls.length;
    const result = await engine.pay(checkoutId, { kind: 'checkout_token', token }, 'sub-race', approvedCard(), { address: '127.0.0.1' });
    expect(result.status).toBe('succeeded');
    expect(result.settled.order.method).toBe('bank_transfer');

    const [capture, reversal, ...rest] = alpha.calls.slice(calls);
    expect(capture?.op).toBe('capture');
    expect(reversal).toEqual({ op: 'reverse', ref: capture!.ref });
    expect(rest).toEqual([]);
    const attempts = await t.attemptsOf(id);
    expect(attempts.map((a) => [a.method, a.status, a.cancellation_reason])).toEqual([
      ['card', 'reversed', 'order_paid'],
      ['bank_transfer', 'succeeded', null],
    ]);
    expect(attempts[0].processor_ref).toBe(capture!.ref);
    const events = await svc.db.knex('events').where({ order_id: id }).orderBy('sequence');
    expect(events.map((e) => e.type)).toEqual(['order.created', 'order.paid', 'order.payment_reversed']);
    expect(events[2].data).toMatchObject({ id, status: 'paid', amount: 2500, reversal: { attempt_id: attempts[0].id, method: 'card', route: 'simulated_alpha', reason: 'order_paid' } });
    expect(events[2].sequence).toBe(3);
  });

  it('a reversal the acquirer refuses stays pending, then the sweep completes it', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    alpha.failReversals = 1;
    alpha.onCapture = async () => {
      alpha.onCapture = undefined;
      await svc.db.knex('payment_attempts').where({ order_id: id, status: 'processing' }).update({ updated_at: new Date(Date.now() - 3 * 60_000) });
      await engine.receiveTransfer(await orderRow(id));
    };
    const errorsBefore = backgroundErrors.length;
    expect((await engine.pay(checkoutId, { kind: 'checkout_token', token }, 'sub-race', approvedCard(), { address: '127.0.0.1' })).status).toBe('succeeded');
    expect(backgroundErrors.length).toBe(errorsBefore + 1);
    expect((await t.attemptsOf(id))[0]).toMatchObject({ status: 'reversal_pending', cancellation_reason: 'order_paid' });
    expect(await t.eventTypes(id)).toEqual(['order.created', 'order.paid']);

    // Too soon: a reversal just tried is left to the process that tried it.
    await engine.recoverAttempts(100);
    expect((await t.attemptsOf(id))[0].status).toBe('reversal_pending');
    offsetMs = 60_000;
    try {
      expect(await engine.recoverAttempts(100)).toBeGreaterThanOrEqual(1);
    } finally {
      offsetMs = 0;
    }
    expect((await t.attemptsOf(id))[0]).toMatchObject({ status: 'reversed' });
    expect(await t.eventTypes(id)).toEqual(['order.created', 'order.paid', 'order.payment_reversed']);
  });

  it('the sweep settles attempts a crashed process left processing: reversed with a reference, failed without', async () => {
    const a = await t.createOrder();
    const b = await t.createOrder();
    const stale = new Date(Date.now() - 3 * 60_000);
    const merchantId = t.shop.merchant_id;
    await insertLeftBehind(svc.db.knex, [
      processingAttempt({ id: 'att_crash_captured', orderId: a.id, merchantId, at: stale, processorRef: 'alpha_left_behind' }),
      processingAttempt({ id: 'att_crash_early', orderId: b.id, merchantId, at: stale, processorRef: null }),
    ]);
    expect(await engine.recoverAttempts(100)).toBeGreaterThanOrEqual(2);
    expect(alpha.calls).toContainEqual({ op: 'reverse', ref: 'alpha_left_behind' });
    expect((await t.attemptsOf(a.id))[0]).toMatchObject({ status: 'reversed', cancellation_reason: 'attempt_abandoned' });
    expect((await t.attemptsOf(b.id))[0]).toMatchObject({ status: 'failed', decline_code: 'processing_unavailable' });
    expect(await t.eventTypes(a.id)).toEqual(['order.created', 'order.payment_reversed']);
    const leftProcessing = await svc.db.knex('payment_attempts').where({ status: 'processing' }).whereNotNull('processor_ref');
    expect(leftProcessing).toEqual([]);
  });

  it('a route that has not decided (pending): in progress for the caller, the attempt keeps its reference, nothing is paid; the sweep reverses it, never pays it', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    alpha.pendingAuthorizations = 1;
    const calls = alpha.calls.length;
    await expect(engine.pay(checkoutId, { kind: 'checkout_token', token }, 'sub-pending', approvedCard(), { address: '127.0.0.1' })).rejects.toMatchObject({ code: 'checkout.payment_in_progress' });
    const [leg] = await t.attemptsOf(id);
    expect(leg).toMatchObject({ status: 'processing', processor_ref: expect.stringMatching(/^alpha_/) });
    expect(alpha.calls.slice(calls), 'nothing captured on a pending answer').toEqual([]);
    expect((await orderRow(id)).status).toBe('pending');
    // No answer within the stale limit: what the route holds is reversed, and the order was never paid.
    await svc.db.knex('payment_attempts').where({ id: leg.id }).update({ updated_at: new Date(Date.now() - 3 * 60_000) });
    expect(await engine.recoverAttempts(100)).toBeGreaterThanOrEqual(1);
    expect(alpha.calls.slice(calls)).toEqual([{ op: 'reverse', ref: leg.processor_ref }]);
    expect((await t.attemptsOf(id))[0]).toMatchObject({ status: 'reversed' });
    expect(await t.eventTypes(id)).toEqual(['order.created', 'order.payment_reversed']);
  });

  it('the expiry sweep leaves an order whose payment is in flight to that payment', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    alpha.onCapture = async () => {
      alpha.onCapture = undefined;
      await svc.db.knex('orders').where({ id }).update({ expires_at: new Date(Date.now() - 1000) });
      await engine.expireDue(100);
      expect((await orderRow(id)).status).toBe('pending');
    };
    const result = await engine.pay(checkoutId, { kind: 'checkout_token', token }, 'sub-1', approvedCard(), { address: '127.0.0.1' });
    expect(result.status).toBe('succeeded');
    expect(await t.eventTypes(id)).toEqual(['order.created', 'order.paid']);
  });

  it('records the authorization before capturing, so a crash after the capture leaves a reference to reverse', async () => {
    const { id, checkoutId, token } = await t.createOrder();
    let seen: { status: string; processor_ref: string | null } | undefined;
    alpha.onCapture = async () => {
      alpha.onCapture = undefined;
      seen = (await t.attemptsOf(id))[0];
    };
    await engine.pay(checkoutId, { kind: 'checkout_token', token }, 'sub-1', approvedCard(), { address: '127.0.0.1' });
    expect(seen).toMatchObject({ status: 'processing' });
    expect(seen?.processor_ref).toMatch(/^alpha_/);
  });
});
