import { timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { Client } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { SubscriptionService, TestClockService } from '../../../src/gen/checkout/v1/subscription_pb.ts';
import { emptyBodyIsEmptyObject } from '../shared/body.ts';
import { coreCall } from '../shared/core-call.ts';
import { page } from '../shared/list-query.ts';
import type { IdParams } from '../shared/schemas.ts';
import {
  advanceTestClockSchema,
  cancelSubscriptionSchema,
  createSubscriptionSchema,
  createTestClockSchema,
  listSubscriptionsSchema,
  pauseSubscriptionSchema,
  resumeSubscriptionSchema,
  retrieveSubscriptionSchema,
  retrieveTestClockSchema,
  type AdvanceBody,
  type CancelBody,
  type CreateSubscriptionBody,
  type CreateTestClockBody,
  type SubscriptionListQuery,
  type UpdateSubscriptionBody,
  updateSubscriptionSchema,
} from './schemas.ts';
import { subscriptionJson, testClockJson } from './subscription-json.ts';

const nullToUndefined = <T>(value: T | null | undefined): T | undefined => (value === null ? undefined : value);

/** Registers /v1/subscriptions and /v1/test_helpers/test_clocks, calls to SubscriptionService and TestClockService. */
export function registerSubscriptionRoutes(app: FastifyInstance, subscriptions: Client<typeof SubscriptionService>, clocks: Client<typeof TestClockService>): void {
  app.post<{ Body: CreateSubscriptionBody }>('/v1/subscriptions', { schema: createSubscriptionSchema }, async (req, reply) => {
    const b = req.body;
    const res = await subscriptions.createSubscription(
      {
        customer: b.customer,
        card: b.card,
        amount: BigInt(b.amount),
        currency: b.currency,
        reference: b.reference,
        lineItems: (b.line_items ?? []).map((item) => ({ name: item.name, amount: BigInt(item.amount) })),
        interval: b.interval,
        intervalCount: nullToUndefined(b.interval_count),
        startDate: b.start_date ? timestampFromDate(new Date(b.start_date)) : undefined,
        trialDays: nullToUndefined(b.trial_days),
        cycles: nullToUndefined(b.cycles),
        afterFailedRetries: b.after_failed_retries ?? undefined,
      },
      coreCall(req),
    );
    return reply.code(201).send(subscriptionJson(res.subscription!));
  });

  app.get<{ Params: IdParams }>('/v1/subscriptions/:id', { schema: retrieveSubscriptionSchema }, async (req) => subscriptionJson((await subscriptions.getSubscription({ id: req.params.id }, coreCall(req))).subscription!));

  app.get<{ Querystring: SubscriptionListQuery }>('/v1/subscriptions', { schema: listSubscriptionsSchema }, async (req) => {
    const res = await subscriptions.listSubscriptions({ ...page(req.query), customer: req.query.customer }, coreCall(req));
    return { object: 'list', url: '/v1/subscriptions', has_more: res.hasMore, data: res.subscriptions.map(subscriptionJson) };
  });

  app.post<{ Params: IdParams; Body: UpdateSubscriptionBody }>('/v1/subscriptions/:id', { schema: updateSubscriptionSchema }, async (req) =>
    subscriptionJson((await subscriptions.updateSubscription({ id: req.params.id, card: req.body.card ?? undefined }, coreCall(req))).subscription!),
  );
  app.post<{ Params: IdParams; Body: CancelBody }>('/v1/subscriptions/:id/cancel', { schema: cancelSubscriptionSchema, preValidation: emptyBodyIsEmptyObject }, async (req) =>
    subscriptionJson((await subscriptions.cancelSubscription({ id: req.params.id, atPeriodEnd: req.body.at_period_end ?? false }, coreCall(req))).subscription!),
  );
  app.post<{ Params: IdParams }>('/v1/subscriptions/:id/pause', { schema: pauseSubscriptionSchema, preValidation: emptyBodyIsEmptyObject }, async (req) =>
    subscriptionJson((await subscriptions.pauseSubscription({ id: req.params.id }, coreCall(req))).subscription!),
  );
  app.post<{ Params: IdParams }>('/v1/subscriptions/:id/resume', { schema: resumeSubscriptionSchema, preValidation: emptyBodyIsEmptyObject }, async (req) =>
    subscriptionJson((await subscriptions.resumeSubscription({ id: req.params.id }, coreCall(req))).subscription!),
  );

  app.post<{ Body: CreateTestClockBody }>('/v1/test_helpers/test_clocks', { schema: createTestClockSchema, preValidation: emptyBodyIsEmptyObject }, async (req, reply) => {
    const res = await clocks.createTestClock({ name: req.body.name ?? '', frozenTime: req.body.frozen_time ? timestampFromDate(new Date(req.body.frozen_time)) : undefined }, coreCall(req));
    return reply.code(201).send(testClockJson(res.testClock!));
  });
  app.get<{ Params: IdParams }>('/v1/test_helpers/test_clocks/:id', { schema: retrieveTestClockSchema }, async (req) => testClockJson((await clocks.getTestClock({ id: req.params.id }, coreCall(req))).testClock!));
  app.post<{ Params: IdParams; Body: AdvanceBody }>('/v1/test_helpers/test_clocks/:id/advance', { schema: advanceTestClockSchema }, async (req) => {
    const res = await clocks.advanceTestClock({ id: req.params.id, to: timestampFromDate(new Date(req.body.to)) }, coreCall(req));
    return testClockJson(res.testClock!);
  });
}
