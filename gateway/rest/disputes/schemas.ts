import Type, { type Static } from 'typebox';
import { DISPUTE_REASONS } from '../../../src/modules/dispute/domain/dispute.entity.ts';
import { Filter, ListQuery } from '../shared/list-query.ts';
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
  OptionalText,
  OptionalTimestamp,
  OrNull,
  STATE_CHANGE_ERRORS,
} from '../shared/schemas.ts';

// Every shape of /v1/disputes, /v1/orders/:id/evidence and the dispute test helper, declared once.

const tags = ['disputes'];
const REASONS = [...DISPUTE_REASONS];

const evidenceFields = {
  customer_email: OptionalText({ description: 'At most 254 characters, an email address.' }),
  customer_name: OptionalText({ description: 'At most 255 characters.' }),
  shipping_carrier: OptionalText({ description: 'At most 100 characters.' }),
  tracking_number: OptionalText({ description: 'At most 100 characters.' }),
  delivered_at: OptionalTimestamp({ description: 'When the goods were delivered.' }),
  product_description: OptionalText({ description: 'At most 2,000 characters.' }),
  notes: OptionalText({ description: 'At most 5,000 characters. In test mode, winning_evidence or losing_evidence decides a submitted dispute.' }),
};

export const EvidenceBody = Body(
  evidenceFields,
  'The request body must be a JSON object of evidence fields, e.g. {"tracking_number": "1Z999", "shipping_carrier": "UPS"}. A field given replaces the stored one, "" clears it, an absent (or null) one is kept.',
);
export type EvidenceBody = Static<typeof EvidenceBody>;

export const SubmitBody = Body({ evidence: Type.Optional(EvidenceBody) }, 'The request body must be a JSON object, e.g. {} or {"evidence": {"notes": "…"}}.', { optional: true });
export type SubmitBody = Static<typeof SubmitBody>;

export const CreateDisputeBody = Body(
  {
    reason: OneOf(REASONS, { description: REASONS.join(', ') + '.' }),
    amount: Type.Optional(Amount({ description: 'Minor units; what remains of the capture (less refunds and other disputes) when omitted.' })),
    evidence_due_by: OptionalTimestamp({ description: 'When the evidence is due; 7 days ahead when omitted. May be in the past.' }),
  },
  'The request body must be a JSON object, e.g. {"reason": "fraudulent", "amount": 1000}.',
);
export type CreateDisputeBody = Static<typeof CreateDisputeBody>;

export const DisputeListQuery = ListQuery({ order: Filter('Only the disputes of this order (ord_…).') });
export type DisputeListQuery = Static<typeof DisputeListQuery>;

const nullableText = OrNull(Type.String());

export const EvidenceSchema = Type.Object(
  {
    object: Type.Literal('evidence'),
    order: Type.String({ description: "The order's id." }),
    customer_email: nullableText,
    customer_name: nullableText,
    shipping_carrier: nullableText,
    tracking_number: nullableText,
    delivered_at: OrNull(IsoTime()),
    product_description: nullableText,
    notes: nullableText,
    service: Type.Object(
      {
        authentication: OrNull(Type.String({ description: "The 3-D Secure outcome of the paying attempt: not_required, passed, …" })),
        paid_at: OrNull(IsoTime()),
        customer_ip: OrNull(Type.String({ description: 'The address the checkout saw (an IPv6 address by its /64).' })),
        receipt_url: OrNull(Type.String({ description: 'The order\'s checkout page, which shows the receipt once paid.' })),
        card_brand: nullableText,
        card_last4: nullableText,
      },
      { description: 'What the service knows itself about the payment.' },
    ),
    updated: OrNull(IsoTime({ description: 'When the merchant last changed it.' })),
  },
  { $id: 'Evidence' },
);

export const DisputeSchema = Type.Object(
  {
    id: Type.String({ pattern: '^dp_' }),
    object: Type.Literal('dispute'),
    order: Type.String({ description: "The disputed order's id." }),
    reference: Type.String({ description: "The order's reference." }),
    amount: Type.Integer({ description: 'Minor units of currency.' }),
    currency: Type.String(),
    reason: Type.String({ enum: REASONS }),
    status: Type.String({ enum: ['needs_response', 'under_review', 'won', 'lost'] }),
    evidence_due_by: OrNull(IsoTime()),
    evidence: Type.Union([Type.Ref('Evidence'), Type.Null()], { description: "As submitted once submitted; before, the order's evidence as it stands (null on an order's list of disputes until submitted)." }),
    submission_count: Type.Integer(),
    fee: Type.Integer({ description: 'The dispute fee, in minor units of fee_currency (the settlement currency); not returned when won.' }),
    fee_currency: Type.String(),
    livemode: Type.Boolean(),
    created: OrNull(IsoTime()),
    closed: OrNull(IsoTime({ description: 'When it was won or lost.' })),
  },
  { $id: 'Dispute' },
);

export const retrieveDisputeSchema = {
  operationId: 'retrieveDispute',
  summary: 'Retrieve a dispute',
  tags,
  params: IdParams,
  querystring: NoQuery,
  response: { 200: { ...Type.Ref('Dispute'), description: 'The dispute.' }, ...COMMON_ERRORS, ...NOT_FOUND },
};

export const listDisputesSchema = {
  operationId: 'listDisputes',
  summary: 'List disputes, newest first',
  tags,
  querystring: DisputeListQuery,
  response: { 200: { ...ListOf('Dispute'), description: 'A page of disputes.' }, ...COMMON_ERRORS },
};

export const submitDisputeSchema = {
  operationId: 'submitDispute',
  summary: "Submit the order's evidence (with any given here) for a dispute that needs a response",
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: SubmitBody,
  response: {
    200: { ...Type.Ref('Dispute'), description: 'The dispute, under_review.' },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    409: ErrorAnswer('The dispute was submitted or closed already (dispute_not_submittable), or its evidence was due earlier (dispute_evidence_past_due).'),
    422: ErrorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused).'),
  },
};

export const attachEvidenceSchema = {
  operationId: 'attachEvidence',
  summary: "Attach evidence to an order, before or during a dispute (merged into what it holds)",
  tags,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: EvidenceBody,
  response: {
    200: { ...Type.Ref('Evidence'), description: "The order's evidence as it now stands." },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    ...STATE_CHANGE_ERRORS,
  },
};

export const createDisputeSchema = {
  operationId: 'createTestDispute',
  summary: 'Test mode only: open a dispute of a paid order, as a card network would',
  tags: ['test_helpers'],
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateDisputeBody,
  response: {
    201: { ...Type.Ref('Dispute'), description: 'The dispute, needs_response.' },
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...BODY_ERRORS,
    ...STATE_CHANGE_ERRORS,
  },
};

/** The shared schemas of this resource, added once to the app. */
export const DISPUTE_SCHEMAS = [EvidenceSchema, DisputeSchema];
