import Type, { type Static } from 'typebox';
import { INTERVALS } from '../../../src/modules/subscription/domain/schedule.ts';
import { AFTER_FAILED_RETRIES } from '../../../src/modules/subscription/domain/subscription.entity.ts';
import {
  Amount,
  Body,
  BODY_ERRORS,
  COMMON_ERRORS,
  ErrorAnswer,
  IdempotencyHeaders,
  IdParams,
  IsoTime,
  ListOf,
  NoQuery,
  NOT_FOUND,
  OneOf,
  OptionalFlag,
  OptionalInteger,
  OptionalList,
  OptionalOneOf,
  OptionalText,
  OptionalTimestamp,
  OrNull,
  STATE_CHANGE_ERRORS,
  Text,
  Timestamp,
} from '../shared/schemas.ts';
import { Filter, ListQuery } from '../shared/list-query.ts';
import { LineItemInput } from '../orders/schemas.ts';

// Every shape of /v1/subscriptions and /v1/test_helpers/test_clocks, declared once.

export const CreateSubscriptionBody = Body(
  {
    customer: Text({ description: 'The customer (cus_…) whose saved card is charged.' }),
    card: Text({ description: 'A saved card (card_…) of the customer.' }),
    amount: Amount({ description: 'Minor units charged each cycle.' }),
    currency: Text({ description: 'ISO 4217, uppercase.' }),
    reference: Text({ description: 'Your reference: every cycle’s order carries it, with the cycle number.' }),
    line_items: OptionalList(LineItemInput, 'line_items must be an array of {name, amount} objects.', { description: 'Each cycle’s order shows them; their amounts must sum to amount.' }),
    interval: OneOf(INTERVALS, { description: 'day, week, month or year.' }),
    interval_count: OptionalInteger({ description: 'Periods per cycle (3 with month: quarterly); a cycle is at most a year. 1 when omitted.' }),
    start_date: OptionalTimestamp({ description: 'When it starts (its trial, if any, begins then); now when omitted. Not in the past.' }),
    trial_days: OptionalInteger({ description: 'Days before the first charge, 0 to 730.' }),
    cycles: OptionalInteger({ description: 'Stop after this many charged cycles (1 to 1000); until canceled when omitted.' }),
    after_failed_retries: OptionalOneOf(AFTER_FAILED_RETRIES, { description: 'unpaid (the default: charging stops, the subscription stays) or cancel, once a failed cycle’s retries are spent.' }),
  },
  'The request body must be a JSON object, e.g. {"customer": "cus_…", "card": "card_…", "amount": 990, "currency": "EUR", "reference": "plan-gold", "interval": "month"}.',
);
export type CreateSubscriptionBody = Static<typeof CreateSubscriptionBody>;

export const UpdateSubscriptionBody = Body({ card: OptionalText({ description: 'Another saved card (card_…) of the customer, charged from now on.' }) }, 'The request body must be a JSON object, e.g. {"card": "card_…"}.');
export type UpdateSubscriptionBody = Static<typeof UpdateSubscriptionBody>;

export const CancelBody = Body({ at_period_end: OptionalFlag({ description: 'true: cancel when the current period ends (the next cycle is not charged); false or omitted: now.' }) }, 'The request body must be a JSON object, e.g. {} or {"at_period_end": true}.', { optional: true });
export type CancelBody = Static<typeof CancelBody>;
export const NoParams = Body({}, 'This call takes no parameters: send no body, or {}.', { optional: true });

export const SubscriptionListQuery = ListQuery({ customer: Filter('Only the subscriptions of this customer (cus_…).') });
export type SubscriptionListQuery = Static<typeof SubscriptionListQuery>;

export const SubscriptionSchema = Type.Object(
  {
    id: Type.String({ pattern: '^sub_' }),
    object: Type.Literal('subscription'),
    customer: Type.String(),
    card: Type.String(),
    amount: Type.Integer(),
    currency: Type.String(),
    reference: Type.String(),
    line_items: Type.Array(Type.Object({ name: Type.String(), amount: Type.Integer() })),
    interval: Type.String({ enum: ['day', 'week', 'month', 'year'] }),
    interval_count: Type.Integer(),
    start_date: IsoTime(),
    trial_days: Type.Integer(),
    cycles: OrNull(Type.Integer()),
    after_failed_retries: Type.String({ enum: ['unpaid', 'cancel'] }),
    status: Type.String({ enum: ['trialing', 'active', 'past_due', 'unpaid', 'paused', 'canceled'] }),
    next_cycle: Type.Integer({ description: 'The next cycle to charge (1 for the first).' }),
    next_charge_at: OrNull(IsoTime({ description: 'When the next charge (a cycle, or a retry) is due; null when none will be.' })),
    retries: Type.Integer({ description: 'Retries made of the cycle in arrears.' }),
    cancel_at_period_end: Type.Boolean(),
    canceled_at: OrNull(IsoTime()),
    cancellation_reason: OrNull(Type.String({ enum: ['requested', 'cycles_completed', 'payment_failed', 'customer_deleted'] })),
    test_clock: OrNull(Type.String()),
    livemode: Type.Boolean(),
    created: IsoTime(),
    charged_cycles: Type.Array(Type.Object({ cycle: Type.Integer(), order: Type.String(), charges: Type.Integer() }), { description: 'Each cycle’s order (with its receipt) and how many charges it took.' }),
  },
  { $id: 'Subscription' },
);

export const TestClockSchema = Type.Object(
  {
    id: Type.String({ pattern: '^clock_' }),
    object: Type.Literal('test_clock'),
    name: Type.String(),
    frozen_time: IsoTime(),
    status: Type.String({ enum: ['ready', 'advancing'], description: 'advancing from an advance request until everything due up to target_frozen_time has run; then ready.' }),
    target_frozen_time: OrNull(IsoTime({ description: 'Where the running advance goes; null when ready.' })),
    created: IsoTime(),
  },
  { $id: 'TestClock' },
);

const action = (operationId: string, summary: string, body: typeof CancelBody | typeof NoParams | typeof UpdateSubscriptionBody) => ({
  operationId,
  summary,
  tags: ['subscriptions'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body,
  response: {
    200: { ...Type.Ref('Subscription'), description: 'The subscription as it now stands.' },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer('Its state does not allow it (subscription_state_invalid), it changed concurrently, or (resume) its test clock is advancing (test_clock_advancing).'),
    422: ErrorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused).'),
  },
});

export const createSubscriptionSchema = {
  operationId: 'createSubscription',
  summary: 'Charge a customer’s saved card on a schedule, each cycle its own order',
  tags: ['subscriptions'],
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateSubscriptionBody,
  response: {
    201: { ...Type.Ref('Subscription'), description: 'The subscription; its first cycle charged already when due at once.' },
    ...COMMON_ERRORS,
    ...STATE_CHANGE_ERRORS,
    ...BODY_ERRORS,
    409: ErrorAnswer('It changed concurrently (concurrent_change), or the customer’s test clock is advancing (test_clock_advancing).'),
  },
};
export const updateSubscriptionSchema = action('updateSubscription', 'Change the saved card charged from now on', UpdateSubscriptionBody);
export const cancelSubscriptionSchema = action('cancelSubscription', 'Cancel now, or at the current period’s end', CancelBody);
export const pauseSubscriptionSchema = action('pauseSubscription', 'Pause collection: no cycle is charged until resumed', NoParams);
export const resumeSubscriptionSchema = action('resumeSubscription', 'Resume collection: cycles whose dates passed while paused are skipped', NoParams);
export const retrieveSubscriptionSchema = {
  operationId: 'retrieveSubscription',
  summary: 'Retrieve a subscription with its cycles’ orders',
  tags: ['subscriptions'],
  params: IdParams,
  querystring: NoQuery,
  response: { 200: { ...Type.Ref('Subscription'), description: 'The subscription.' }, ...COMMON_ERRORS, ...NOT_FOUND },
};
export const listSubscriptionsSchema = {
  operationId: 'listSubscriptions',
  summary: 'List subscriptions, newest first',
  tags: ['subscriptions'],
  querystring: SubscriptionListQuery,
  response: { 200: { ...ListOf('Subscription'), description: 'A page of subscriptions.' }, ...COMMON_ERRORS },
};

export const CreateTestClockBody = Body(
  { frozen_time: OptionalTimestamp({ description: 'The clock’s start: now to five years ahead; now when omitted.' }), name: OptionalText({ description: 'At most 100 characters.' }) },
  'The request body must be a JSON object, e.g. {} or {"frozen_time": "2030-01-31T09:00:00Z"}.',
  { optional: true },
);
export type CreateTestClockBody = Static<typeof CreateTestClockBody>;
export const AdvanceBody = Body(
  { to: Timestamp({ description: 'Later than the clock’s time; at most two periods of the shortest subscription billing on it (two years when none bills).' }) },
  'The request body must be a JSON object, e.g. {"to": "2030-02-28T09:00:00Z"}.',
);
export type AdvanceBody = Static<typeof AdvanceBody>;

const clockAnswer = { 200: { ...Type.Ref('TestClock'), description: 'The test clock.' } };
export const createTestClockSchema = {
  operationId: 'createTestClock',
  summary: 'Test mode only: a clock that customers (and their subscriptions) can run on',
  tags: ['test_helpers'],
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateTestClockBody,
  response: { 201: { ...Type.Ref('TestClock'), description: 'The test clock.' }, ...COMMON_ERRORS, ...STATE_CHANGE_ERRORS, ...BODY_ERRORS },
};
export const retrieveTestClockSchema = { operationId: 'retrieveTestClock', summary: 'Test mode only: retrieve a test clock', tags: ['test_helpers'], params: IdParams, querystring: NoQuery, response: { ...clockAnswer, ...COMMON_ERRORS, ...NOT_FOUND } };
export const advanceTestClockSchema = {
  operationId: 'advanceTestClock',
  summary: 'Test mode only: start moving the clock forward; it is ready (test_clock.ready) once every charge due on the way has run, in order',
  tags: ['test_helpers'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: AdvanceBody,
  response: {
    200: { ...Type.Ref('TestClock'), description: 'The clock, advancing: poll it (or wait for test_clock.ready) until its status is ready.' },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer('An advance of this clock is running (test_clock_advancing).'),
    429: ErrorAnswer('Too many requests for this API key (rate_limit_exceeded), or five of your test clocks are advancing already (too_many_advancing_test_clocks).'),
  },
};

/** The shared schemas of this resource, added once to the app. */
export const SUBSCRIPTION_SCHEMAS = [SubscriptionSchema, TestClockSchema];
