import Type, { type Static } from 'typebox';
import {
  Body,
  BODY_ERRORS,
  COMMON_ERRORS,
  ERROR_NOTE,
  IdempotencyHeaders,
  IdParams,
  IsoTime,
  ListOf,
  Nested,
  NOT_FOUND,
  NoBody,
  NoQuery,
  OptionalText,
  OrNull,
  STATE_CHANGE_ERRORS,
  Text,
} from '../shared/schemas.ts';
import { Filter, ListQuery } from '../shared/list-query.ts';

// Every shape of /v1/customers, their cards, and /v1/tokens, declared once.

const Metadata = Type.Optional(
  Type.Object(
    {},
    {
      additionalProperties: Type.String({ [ERROR_NOTE]: { code: 'metadata_invalid', message: 'metadata values must be strings.' } }),
      description: 'Your key-value pairs: at most 50 keys of 1 to 40 characters, values of at most 500 characters. On update, keys are merged and an empty value removes its key.',
      [ERROR_NOTE]: { code: 'metadata_invalid', message: 'metadata must be an object of string values, e.g. {"plan": "gold"}.' },
    },
  ),
);

const CUSTOMER_FIELDS = {
  email: OptionalText({ description: 'At most 512 characters, one @; "" clears it on update.' }),
  name: OptionalText({ description: 'At most 200 characters; "" clears it on update.' }),
  reference: OptionalText({ description: 'Your own id for the customer, at most 255 characters; "" clears it on update.' }),
  metadata: Metadata,
};

export const CreateCustomerBody = Body({ ...CUSTOMER_FIELDS, test_clock: OptionalText({ description: 'Test mode only: the test clock (clock_…) the customer and its subscriptions run on.' }) }, 'The request body must be a JSON object, e.g. {"email": "ada@example.com", "name": "Ada"}.', { optional: true });
export type CreateCustomerBody = Static<typeof CreateCustomerBody>;
export const UpdateCustomerBody = Body(CUSTOMER_FIELDS, 'The request body must be a JSON object with email, name, reference or metadata.');
export type UpdateCustomerBody = Static<typeof UpdateCustomerBody>;

export const CardInput = Nested(
  {
    number: Text({ description: 'The card number (spaces and dashes allowed).' }),
    exp_month: Type.Integer({ minimum: 1, maximum: 12, [ERROR_NOTE]: { code: 'parameter_invalid_integer', message: '{param} must be an integer from 1 to 12.' } }),
    exp_year: Type.Integer({ [ERROR_NOTE]: { code: 'parameter_invalid_integer', message: '{param} must be an integer, e.g. 2030.' } }),
    cvc: Text({ description: '3 digits (4 for amex): checked with the issuer once, never stored.' }),
    name: Text({ description: 'The name on the card, 1 to 100 characters.' }),
  },
  '{param} must be an object with number, exp_month, exp_year, cvc and name.',
);

export const CreateCardBody = Body(
  {
    token: OptionalText({ description: 'A single-use token (tok_…) from POST /v1/tokens, made with your publishable key in the customer\'s browser or app. Preferred: the card number never reaches your server.' }),
    card: Type.Optional(CardInput),
  },
  'The request body must be a JSON object with token (tok_…) or card (raw card fields, PCI-compliant servers only).',
);
export type CreateCardBody = Static<typeof CreateCardBody>;

export const CreateTokenBody = Body({ card: CardInput }, 'The request body must be a JSON object, e.g. {"card": {"number": "4242…", "exp_month": 12, "exp_year": 2030, "cvc": "123", "name": "Ada"}}.');
export type CreateTokenBody = Static<typeof CreateTokenBody>;

export const CustomerListQuery = ListQuery({ email: Filter('Only customers with exactly this email.') });
export type CustomerListQuery = Static<typeof CustomerListQuery>;

export const CardParams = Type.Object({ id: Type.String({ description: 'The customer\'s id.' }), card: Type.String({ description: 'The card\'s id.' }) });
export type CardParams = Static<typeof CardParams>;

export const CustomerSchema = Type.Object(
  {
    id: Type.String({ pattern: '^cus_' }),
    object: Type.Literal('customer'),
    email: OrNull(Type.String()),
    name: OrNull(Type.String()),
    reference: OrNull(Type.String()),
    metadata: Type.Object({}, { additionalProperties: Type.String() }),
    livemode: Type.Boolean(),
    test_clock: OrNull(Type.String({ description: 'The test clock the customer runs on (test mode), or null.' })),
    created: IsoTime(),
  },
  { $id: 'Customer' },
);

export const SavedCardSchema = Type.Object(
  {
    id: Type.String({ pattern: '^card_', description: 'The token reference to charge the card by (POST /v1/orders with customer, card and confirm).' }),
    object: Type.Literal('card'),
    customer: Type.String(),
    brand: Type.String({ enum: ['visa', 'mastercard', 'amex', 'discover', 'unknown'] }),
    last4: Type.String(),
    exp_month: Type.Integer(),
    exp_year: Type.Integer(),
    fingerprint: Type.String({ description: 'The same for the same card number within your account, different across accounts: spots duplicates.' }),
    livemode: Type.Boolean(),
    created: IsoTime(),
  },
  { $id: 'SavedCard' },
);

export const CardTokenSchema = Type.Object(
  {
    id: Type.String({ pattern: '^tok_' }),
    object: Type.Literal('token'),
    card: Type.Object({ brand: Type.String(), last4: Type.String(), exp_month: Type.Integer(), exp_year: Type.Integer() }),
    livemode: Type.Boolean(),
    created: IsoTime(),
    expires_at: IsoTime({ description: 'Usable once, until this time (10 minutes).' }),
  },
  { $id: 'CardToken' },
);

const customers = ['customers'];
const customerAnswer = (description: string) => ({ ...Type.Ref('Customer'), description });
const cardAnswer = (description: string) => ({ ...Type.Ref('SavedCard'), description });

export const createCustomerSchema = {
  operationId: 'createCustomer',
  summary: 'Create a customer',
  tags: customers,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateCustomerBody,
  response: { 201: customerAnswer('The customer.'), ...COMMON_ERRORS, ...BODY_ERRORS, ...STATE_CHANGE_ERRORS },
};

export const listCustomersSchema = {
  operationId: 'listCustomers',
  summary: 'List customers, newest first',
  tags: customers,
  querystring: CustomerListQuery,
  response: { 200: { ...ListOf('Customer'), description: 'A page of customers.' }, ...COMMON_ERRORS },
};

export const retrieveCustomerSchema = {
  operationId: 'retrieveCustomer',
  summary: 'Retrieve a customer',
  tags: customers,
  params: IdParams,
  querystring: NoQuery,
  response: { 200: customerAnswer('The customer.'), ...COMMON_ERRORS, ...NOT_FOUND },
};

export const updateCustomerSchema = {
  operationId: 'updateCustomer',
  summary: 'Change a customer\'s email, name, reference or metadata',
  tags: customers,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: UpdateCustomerBody,
  response: { 200: customerAnswer('The customer.'), ...COMMON_ERRORS, ...NOT_FOUND, ...BODY_ERRORS, ...STATE_CHANGE_ERRORS },
};

export const deleteCustomerSchema = {
  operationId: 'deleteCustomer',
  summary: 'Delete a customer; its saved cards are erased',
  tags: customers,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: NoBody,
  response: {
    200: Type.Object(
      { id: Type.String(), object: Type.Literal('customer'), deleted: Type.Literal(true), cards_erased: Type.Integer({ description: 'How many saved cards were erased (their encrypted numbers deleted).' }) },
      { description: 'The customer is gone.' },
    ),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...STATE_CHANGE_ERRORS,
  },
};

export const createCardSchema = {
  operationId: 'createCard',
  summary: 'Vault a card for a customer (from a token, or raw card fields on a PCI-compliant server)',
  tags: customers,
  params: IdParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateCardBody,
  response: { 201: cardAnswer('The saved card: brand, last four digits, expiry and fingerprint.'), ...COMMON_ERRORS, ...NOT_FOUND, ...BODY_ERRORS, ...STATE_CHANGE_ERRORS },
};

export const listCardsSchema = {
  operationId: 'listCards',
  summary: 'List a customer\'s saved cards, newest first',
  tags: customers,
  params: IdParams,
  querystring: NoQuery,
  response: { 200: { ...ListOf('SavedCard'), description: 'Every saved card of the customer (at most 50).' }, ...COMMON_ERRORS, ...NOT_FOUND },
};

export const retrieveCardSchema = {
  operationId: 'retrieveCard',
  summary: 'Retrieve a saved card',
  tags: customers,
  params: CardParams,
  querystring: NoQuery,
  response: { 200: cardAnswer('The saved card.'), ...COMMON_ERRORS, ...NOT_FOUND },
};

export const deleteCardSchema = {
  operationId: 'deleteCard',
  summary: 'Delete a saved card (its encrypted number is erased)',
  tags: customers,
  params: CardParams,
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: NoBody,
  response: {
    200: Type.Object({ id: Type.String(), object: Type.Literal('card'), deleted: Type.Literal(true) }, { description: 'The card is gone.' }),
    ...COMMON_ERRORS,
    ...NOT_FOUND,
    ...STATE_CHANGE_ERRORS,
  },
};

export const createTokenSchema = {
  operationId: 'createToken',
  summary: 'Turn card fields into a single-use token (tok_…), with a publishable key',
  tags: ['tokens'],
  headers: IdempotencyHeaders,
  querystring: NoQuery,
  body: CreateTokenBody,
  response: { 201: { ...Type.Ref('CardToken'), description: 'The token: brand, last four and expiry of its card; usable once within 10 minutes.' }, ...COMMON_ERRORS, ...BODY_ERRORS, ...STATE_CHANGE_ERRORS },
};

/** The shared schemas of these resources, added once to the app. */
export const CUSTOMER_SCHEMAS = [CustomerSchema, SavedCardSchema, CardTokenSchema];
