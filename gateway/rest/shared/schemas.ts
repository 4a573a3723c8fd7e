import Type, { type Static, type TSchema } from 'typebox';

// The building blocks of every REST route's schema. A route declares its request and its
// responses once, from these; Fastify validates with them (validation.ts maps a failure to our
// error codes), serializes with them, and @fastify/swagger describes them in /v1/openapi.json.
//
// Value rules (a currency's bounds, a URL's scheme, a reference's length) are the core's: a schema
// describes them in its text but checks only the JSON shape, so every entry point (REST, Connect,
// gRPC) refuses the same values with the same codes.

/** How a failed check of one value is told: our error code and message; `{param}` is the parameter's name, `{list}` the name of the list it is in. */
export interface ErrorNote {
  readonly code: string;
  readonly message: string;
}

/** The annotation validation.ts reads off a schema whose check failed. */
export const ERROR_NOTE = 'x-error';
/** Marks an amount in minor units: a type error states the minor-unit rule for the body's currency. */
export const AMOUNT_NOTE = 'x-amount';
/** The values a string parameter may take: the message for a missing one lists them (validation.ts). */
export const ALLOWED_NOTE = 'x-allowed';
/** Marks a body the caller may leave out (each route reads none as `{}`); the OpenAPI document says it is not required. */
export const OPTIONAL_BODY_NOTE = 'x-optional-body';

function note(code: string, message: string): Record<string, ErrorNote> {
  return { [ERROR_NOTE]: { code, message } };
}

/** A type that also accepts null, which the API reads as "absent"; an enum of it lists null too, or null would match the type but not the enum. */
function nullable<T extends TSchema>(schema: T): T {
  const { type, enum: values } = schema as unknown as { type: string; enum?: unknown[] };
  return { ...schema, type: [type, 'null'], ...(values ? { enum: [...values, null] } : {}) } as unknown as T;
}

/** A required string. */
export function Text(options: { description?: string } = {}) {
  return Type.String({ ...options, ...note('parameter_invalid_string', '{param} must be a string.') });
}

/** An optional string (null counts as absent). */
export function OptionalText(options: { description?: string } = {}) {
  return Type.Optional(nullable(Text(options)));
}

/**
 * A required string from a closed list. The core judges the value (another one gets the core's code, with the
 * list); a missing or non-string one is told here, with the list, so the caller learns what to send.
 */
export function OneOf(values: readonly string[], options: { description?: string } = {}) {
  return Type.String({ ...options, [ALLOWED_NOTE]: [...values], ...note('parameter_invalid_string', `{param} must be one of ${values.join(', ')}.`) });
}

/** An optional {@link OneOf} (null counts as absent). */
export function OptionalOneOf(values: readonly string[], options: { description?: string } = {}) {
  return Type.Optional(nullable(OneOf(values, options)));
}

/** A string from a closed list that the schema itself checks (parameter_invalid, naming the values), for a value the core takes as an enum. */
export function Enum(values: readonly string[], options: { description?: string } = {}) {
  return Type.String({ ...options, enum: [...values], [ALLOWED_NOTE]: [...values], ...note('parameter_invalid', `{param} must be one of ${values.join(', ')}.`) });
}

/** An amount in minor units: a JSON integer within 2^53-1 (larger ones cannot be read exactly). */
export function Amount(options: { description?: string } = {}) {
  return Type.Integer({ maximum: Number.MAX_SAFE_INTEGER, ...options, [AMOUNT_NOTE]: true });
}

/** An optional integer (null counts as absent). */
export function OptionalInteger(options: { description?: string; minimum?: number; maximum?: number } = {}) {
  return Type.Optional(nullable(Type.Integer({ ...options, ...note('parameter_invalid_integer', '{param} must be an integer.') })));
}

/** An optional true or false (null counts as absent). */
export function OptionalFlag(options: { description?: string } = {}) {
  return Type.Optional(nullable(Type.Boolean({ ...options, ...note('parameter_invalid_boolean', '{param} must be true or false.') })));
}

const TIMESTAMP_NOTE = note('parameter_invalid_timestamp', '{param} must be an ISO 8601 date-time with a time zone, e.g. "2030-01-31T12:00:00Z".');

/** A required ISO 8601 date-time with a zone. */
export function Timestamp(options: { description?: string } = {}) {
  return Type.String({ format: 'date-time', ...options, ...TIMESTAMP_NOTE });
}

/** An optional ISO 8601 date-time with a zone (null counts as absent). */
export function OptionalTimestamp(options: { description?: string } = {}) {
  return Type.Optional(nullable(Timestamp(options)));
}

/** An optional list of strings (null counts as absent); `message` says what belongs in it (`{param}` is the list's name). */
export function OptionalStringList(message: string, options: { description?: string } = {}) {
  const item = note('parameter_invalid_array', message.replaceAll('{param}', '{list}'));
  return Type.Optional(nullable(Type.Array(Type.String(item), { ...options, ...note('parameter_invalid_array', message) })));
}

/** An optional list of objects (null counts as absent). */
export function OptionalList<T extends TSchema>(items: T, message: string, options: { description?: string } = {}) {
  return Type.Optional(nullable(Type.Array(items, { ...options, ...note('parameter_invalid_array', message) })));
}

/**
 * A request body: a JSON object with exactly these properties; `message` shows one when something else came.
 * `optional`: the caller may send no body at all (the route must read none as `{}`: emptyBodyIsEmptyObject).
 */
export function Body<P extends Type.TProperties>(properties: P, message: string, options: { description?: string; optional?: boolean } = {}) {
  const { optional, ...rest } = options;
  return Type.Object(properties, { additionalProperties: false, ...rest, ...note('parameter_invalid_object', message), ...(optional ? { [OPTIONAL_BODY_NOTE]: true } : {}) });
}

/** The query of a route that takes none: any parameter is refused by name. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

/** The body of an action that takes no parameters: none, or `{}`. */
export const NoBody = Body({}, 'This call takes no parameters: send no body, or {}.', { optional: true });

/** A nested object of a request body (a line item, say). */
export function Nested<P extends Type.TProperties>(properties: P, message: string) {
  return Type.Object(properties, { additionalProperties: false, ...note('parameter_invalid_object', message) });
}

/** The path parameter `id` of a resource; its shape is the core's to judge (an unknown id is a 404). */
export const IdParams = Type.Object({ id: Type.String({ description: 'The object\'s id.' }) });
export type IdParams = Static<typeof IdParams>;

/** A date-time of a response, or null. */
export function IsoTime(options: { description?: string } = {}) {
  return Type.String({ format: 'date-time', ...options });
}

/** A value of a response that may be null. */
export function OrNull<T extends TSchema>(schema: T): T {
  return nullable(schema);
}

/** A list response: `{object: "list", url, has_more, data}` of items that are the shared schema `ref`. */
export function ListOf(ref: string) {
  return Type.Object({
    object: Type.Literal('list'),
    url: Type.String(),
    has_more: Type.Boolean({ description: 'True when a further page exists; ask for it with starting_after set to the last id.' }),
    data: Type.Array(Type.Ref(ref)),
  });
}

/** The documented error body, shared by every answer that is not a success. */
export const ErrorBody = Type.Object(
  {
    error: Type.Object({
      type: Type.String({ enum: ['invalid_request_error', 'card_error', 'authentication_error', 'permission_error', 'idempotency_error', 'rate_limit_error', 'api_error'] }),
      code: Type.String({ description: 'Machine-readable; see docs/api.md for the list.' }),
      message: Type.String({ description: 'For a person: what went wrong and how to fix it.' }),
      param: Type.Optional(Type.String({ description: 'The parameter at fault, e.g. line_items[0][amount].' })),
      request_id: Type.String({ description: 'Also in the Request-Id header; quote it when asking for help.' }),
    }),
  },
  { $id: 'Error' },
);

/** A response of the shared error schema. */
function errorAnswer(description: string) {
  return { ...Type.Ref('Error'), description };
}

/** The error answers any authenticated route may give. */
export const COMMON_ERRORS = {
  400: errorAnswer('Invalid request: a parameter is missing, unknown or breaks a rule; `param` names it.'),
  401: errorAnswer('Missing, malformed, unknown or revoked API key.'),
  403: errorAnswer('A publishable key was sent where a secret key is needed.'),
  429: errorAnswer('Too many requests for this API key (rate_limit_exceeded); retry after Retry-After seconds.'),
  500: errorAnswer('Our fault; the request id lets us find what happened.'),
  503: errorAnswer('The database is unreachable; retry (with the same Idempotency-Key).'),
} as const;

/** The error answers of a route that names one object by id. */
export const NOT_FOUND = { 404: errorAnswer('No such object for this key (also for other merchants\' and the other mode\'s ids).') } as const;

/** The error answers of a route that reads a JSON body. */
export const BODY_ERRORS = {
  413: errorAnswer('Body larger than 1 MiB.'),
  415: errorAnswer('Body is not JSON.'),
} as const;

/** The error answers of a route that changes state (Idempotency-Key). */
export const STATE_CHANGE_ERRORS = {
  409: errorAnswer('The object changed concurrently (concurrent_change); retry with the same Idempotency-Key.'),
  422: errorAnswer('The same Idempotency-Key came with another request (idempotency_key_reused), or the object\'s state forbids the change (the code says which).'),
} as const;

/** A described error answer of one route. */
export function ErrorAnswer(description: string) {
  return errorAnswer(description);
}

/** The Idempotency-Key request header, documented on every route that changes state. */
export const IdempotencyHeaders = Type.Object({
  'Idempotency-Key': Type.Optional(
    Type.String({
      description: '1-255 printable ASCII characters. A repeat of the same request within 24 hours answers the first response with Idempotent-Replayed: true and does nothing again; the same key with another request is refused (422 idempotency_key_reused).',
    }),
  ),
});
