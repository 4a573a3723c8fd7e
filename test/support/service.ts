import type { Knex } from 'knex';
import type { FastifyInstance } from 'fastify';
import { createCore, type Core, type CoreOptions } from '../../src/composition/core.ts';
import type { SandboxCredentials } from '../../src/modules/merchant/application/create-sandbox.ts';
import { buildGateway } from '../../gateway/app.ts';
import { createTestDatabase, type TestDatabase } from './database.ts';

/** A gateway on its own database, driven with app.inject(). */
export interface TestService {
  readonly db: TestDatabase;
  readonly core: Core;
  readonly app: FastifyInstance;
  /** Errors the core reported as internal (a test can assert there were none). */
  readonly internalErrors: unknown[];
  /** Creates a sandbox merchant with the given name. */
  sandbox(name?: string): Promise<SandboxCredentials>;
  close(): Promise<void>;
}

export const TEST_API_URL = 'http://api.test';
export const TEST_CHECKOUT_URL = 'http://pay.test';

/** Starts core and gateway over a fresh database (no NATS, no listening socket); options reach the core. */
export async function startTestService(options: Pick<CoreOptions, 'velocity' | 'rateLimit' | 'linkStarts' | 'authFailures' | 'webhookAllowPrivateNetworks' | 'clock' | 'payoutCutoffMinutesUtc'> = {}): Promise<TestService> {
  const db = await createTestDatabase();
  const internalErrors: unknown[] = [];
  const core = createCore({
    knex: db.knex,
    apiBaseUrl: TEST_API_URL,
    checkoutHost: TEST_CHECKOUT_URL,
    onInternalError: (err) => internalErrors.push(err),
    ...options,
  });
  const app = await buildGateway({ routes: core.routes, publicUrl: TEST_API_URL, simulatedIssuer: core.simulatedIssuer });
  await app.ready();
  return {
    db,
    core,
    app,
    internalErrors,
    sandbox: async (name = 'Test shop') => (await core.createSandbox({ name, settlementCurrency: 'EUR' }))!,
    async close() {
      await app.close();
      // Every suite ends with the ledger verified: whatever it did to money must balance.
      const broken = await core.ledger.verify();
      await db.drop();
      if (broken) throw new Error(`ledger invariant broken: ${broken.invariant}: ${broken.detail}`);
    },
  };
}

/**
 * A card attempt on the primary route left `processing` at `at`, as a process that crashed (or is still at work) leaves
 * it, for {@link insertLeftBehind}; with processorRef, the acquirer had authorized it.
 */
export function processingAttempt(attempt: { id: string; orderId: string; merchantId: string; at: Date; submissionId?: string; processorRef?: string | null }): Record<string, unknown> & { id: string; order_id: string } {
  return {
    id: attempt.id,
    order_id: attempt.orderId,
    merchant_id: attempt.merchantId,
    livemode: false,
    submission_id: attempt.submissionId ?? `crashed-${attempt.id}`,
    method: 'card',
    route: 'simulated_alpha',
    status: 'processing',
    authentication: 'not_required',
    card_brand: 'visa',
    card_last4: '4242',
    retry: false,
    ...(attempt.processorRef !== undefined ? { processor_ref: attempt.processorRef } : {}),
    created_at: attempt.at,
    updated_at: attempt.at,
  };
}

/**
 * Inserts attempts as a process would have left them, each with the payment it is a leg of (one payment per
 * attempt, in the attempt's state), for tests of what happens to attempts nobody finished.
 */
export async function insertLeftBehind(knex: Knex, attempts: ReadonlyArray<Record<string, unknown> & { id: string; order_id: string }>): Promise<void> {
  for (const attempt of attempts) {
    const order = await knex('orders').where({ id: attempt.order_id }).first();
    const paymentId = `pay_${attempt.id.slice(4)}`;
    await knex('payments').insert({
      id: paymentId,
      order_id: attempt.order_id,
      merchant_id: order.merchant_id,
      livemode: order.livemode,
      method: attempt.method ?? 'card',
      amount: order.amount,
      currency: order.currency,
      status: attempt.status,
      submission_id: attempt.submission_id ?? null,
      created_at: attempt.created_at,
      updated_at: attempt.updated_at,
    });
    await knex('payment_attempts').insert({ ...attempt, payment_id: paymentId });
  }
}
