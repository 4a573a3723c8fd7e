// The server SDK's API types, generated from the /v1 OpenAPI document (which @fastify/swagger builds from
// the TypeBox schemas beside each route, gateway/rest/<resource>/schemas.ts), so the SDK never states a
// REST shape a second time. `npm run generate` writes sdk/node/api-types.ts; scripts/check-generated.ts
// (in `npm run lint`) fails when it is stale, and test/sdk-node.test.ts renders the document the running
// service serves and compares.
//
// A small generator of our own rather than openapi-typescript: the document uses a handful of JSON Schema
// keywords (object, array, enum, nullable type lists, anyOf, allOf, $ref), and the SDK's types are read by
// merchants, so they are named and documented the way stripe-node's are (`Order`, `OrderCreateParams`),
// not `components['schemas']['Order']` and `operations['createOrder']['requestBody']…`. Any keyword it does
// not know stops it, so a new kind of schema cannot quietly become `unknown`.
import path from 'node:path';
import { buildGateway } from '../gateway/app.ts';

/** Where the generated types are written. */
export const SDK_TYPES_FILE = path.resolve(import.meta.dirname, '..', 'sdk', 'node', 'api-types.ts');

type Schema = Record<string, unknown> & {
  type?: string | string[];
  $ref?: string;
  description?: string;
  enum?: unknown[];
  properties?: Record<string, Schema>;
  required?: string[];
  additionalProperties?: boolean | Schema;
  items?: Schema;
  anyOf?: Schema[];
  allOf?: Schema[];
};
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  description?: string;
  schema: Schema;
}
interface Operation {
  operationId: string;
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { content?: Record<string, { schema: Schema }> }>;
}
/** The parts of an OpenAPI 3.1 document the generator reads. */
export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/**
 * The /v1 OpenAPI document as the service serves it, built without a database: the gateway with no core
 * routes behind it (the document needs only the routes' schemas; no request is made).
 */
export async function openApiDocument(): Promise<OpenApiDocument> {
  const app = await buildGateway({ routes: () => {}, publicUrl: 'https://api.checkout.example' });
  try {
    await app.ready();
    return app.swagger() as unknown as OpenApiDocument;
  } finally {
    await app.close();
  }
}

/** Component schemas renamed for the SDK: `Error` would shadow the global. */
const RENAMED: Readonly<Record<string, string>> = { Error: 'ErrorBody' };

/** Request bodies the SDK sends, by operationId: the name of their params type. */
const BODIES: Readonly<Record<string, string>> = {
  createOrder: 'OrderCreateParams',
  captureOrder: 'OrderCaptureParams',
  createRefund: 'RefundCreateParams',
  submitDispute: 'DisputeSubmitParams',
  createPaymentLink: 'PaymentLinkCreateParams',
  createCustomer: 'CustomerCreateParams',
  updateCustomer: 'CustomerUpdateParams',
  createCard: 'CardCreateParams',
  createSubscription: 'SubscriptionCreateParams',
  updateSubscription: 'SubscriptionUpdateParams',
  cancelSubscription: 'SubscriptionCancelParams',
  createWebhookEndpoint: 'WebhookEndpointCreateParams',
  updateWebhookEndpoint: 'WebhookEndpointUpdateParams',
  rotateWebhookSecret: 'WebhookEndpointRotateSecretParams',
};

/** List queries the SDK sends, by operationId: the name of their params type. */
const QUERIES: Readonly<Record<string, string>> = {
  listOrders: 'OrderListParams',
  listPayouts: 'PayoutListParams',
  listPayoutItems: 'PayoutItemListParams',
  listDisputes: 'DisputeListParams',
  listPaymentLinks: 'PaymentLinkListParams',
  listCustomers: 'CustomerListParams',
  listSubscriptions: 'SubscriptionListParams',
  listEvents: 'EventListParams',
};

/** Answers that are not a component schema, by operationId: the name of their type. */
const RESPONSES: Readonly<Record<string, string>> = {
  retrievePayout: 'PayoutWithItems',
  deleteCustomer: 'DeletedCustomer',
  deleteCard: 'DeletedCard',
  deleteWebhookEndpoint: 'DeletedWebhookEndpoint',
};

/** Names for parts of the types above, as indexed types of them. */
const PARTS: readonly (readonly [name: string, type: string, doc: string])[] = [
  ['LineItem', "Order['line_items'][number]", 'One line of an order: its name and amount in minor units.'],
  ['OrderStatus', "Order['status']", 'Where an order is in its life.'],
  ['RefundReason', "Refund['reason']", 'Why a refund was made.'],
  ['EvidenceParams', "NonNullable<DisputeSubmitParams['evidence']>", 'Evidence for a dispute, as submitted.'],
];

/** Keywords that say something about a value the types cannot (bounds, formats): not rendered. */
const ANNOTATIONS = new Set(['description', 'pattern', 'format', 'minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'default', 'title', 'examples']);
const STRUCTURE = new Set(['type', '$ref', 'enum', 'properties', 'required', 'additionalProperties', 'items', 'anyOf', 'allOf']);

/** A query parameter that travels as digits (`limit`) is typed as the number the SDK writes there. */
const DIGITS_ONLY = /^\^\[0-9\]\{\d+,\d+\}\$$/;

function refName(ref: string): string {
  const match = /^#\/components\/schemas\/(\w+)$/.exec(ref);
  if (!match) throw new Error(`sdk-types: a $ref outside #/components/schemas: ${ref}`);
  return RENAMED[match[1]!] ?? match[1]!;
}

/** A JSDoc block of the description, indented; empty when there is none. */
function jsdoc(description: string | undefined, indent: string): string {
  if (!description) return '';
  const text = description.replaceAll('*/', '*\\/');
  return `${indent}/** ${text} */\n`;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;
const key = (name: string) => (IDENTIFIER.test(name) ? name : literal(name));

/** The TypeScript type of a schema, `indent` being the indentation of the line it starts on. */
function typeOf(schema: Schema, indent: string, where: string): string {
  for (const k of Object.keys(schema)) {
    if (!ANNOTATIONS.has(k) && !STRUCTURE.has(k)) throw new Error(`sdk-types: ${where} uses the keyword "${k}", which the generator does not know; teach scripts/sdk-types.ts.`);
  }
  if (schema.$ref) return refName(schema.$ref);
  if (schema.anyOf) return union(schema.anyOf.map((s, i) => typeOf(s, indent, `${where}.anyOf[${i}]`)));
  if (schema.allOf) return schema.allOf.map((s, i) => typeOf(s, indent, `${where}.allOf[${i}]`)).join(' & ');
  if (schema.enum) return union(schema.enum.map(literal));
  const types = schema.type === undefined ? [] : [schema.type].flat();
  if (types.length === 0) throw new Error(`sdk-types: ${where} has no type.`);
  return union(types.map((t) => single(t, schema, indent, where)));
}

function single(type: string, schema: Schema, indent: string, where: string): string {
  switch (type) {
    case 'string':
      return 'string';
    case 'integer':
    case 'number':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      if (!schema.items) throw new Error(`sdk-types: ${where} is an array without items.`);
      const item = typeOf(schema.items, indent, `${where}[]`);
      return topLevel(item, '|') || topLevel(item, '&') ? `(${item})[]` : `${item}[]`;
    }
    case 'object':
      return objectType(schema, indent, where);
    default:
      throw new Error(`sdk-types: ${where} has the type "${type}", which the generator does not know.`);
  }
}

/** Whether `type` has `op` outside any braces or parentheses (and so needs parentheses before `[]`). */
function topLevel(type: string, op: string): boolean {
  let depth = 0;
  for (const c of type) {
    if (c === '{' || c === '(' || c === '<') depth++;
    else if (c === '}' || c === ')' || c === '>') depth--;
    else if (c === op && depth === 0) return true;
  }
  return false;
}

/** A string, number, boolean or null as a TypeScript literal, strings in single quotes. */
function literal(value: unknown): string {
  if (typeof value === 'string') return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new Error(`sdk-types: an enum value that is not a string, number, boolean or null: ${JSON.stringify(value)}`);
}

function union(members: string[]): string {
  return [...new Set(members)].join(' | ');
}

/** An object literal type: its properties (optional unless required), then any further keys. */
function objectType(schema: Schema, indent: string, where: string): string {
  const properties = Object.entries(schema.properties ?? {});
  const extra = schema.additionalProperties;
  if (properties.length === 0) {
    if (extra && typeof extra === 'object') return `Record<string, ${typeOf(extra, indent, `${where}.*`)}>`;
    return extra === false ? 'Record<string, never>' : 'Record<string, unknown>';
  }
  const inner = `${indent}  `;
  const required = new Set(schema.required ?? []);
  const lines = properties.map(([name, property]) => `${jsdoc(property.description, inner)}${inner}${key(name)}${required.has(name) ? '' : '?'}: ${typeOf(property, inner, `${where}.${name}`)};\n`);
  if (extra && typeof extra === 'object') lines.push(`${inner}[key: string]: ${typeOf(extra, inner, `${where}.*`)};\n`);
  return `{\n${lines.join('')}${indent}}`;
}

/** `export interface Name {…}` for an object schema (extending the refs of an allOf), else `export type Name = …`. */
function declaration(name: string, schema: Schema, where: string): string {
  const doc = jsdoc(schema.description, '');
  const { description: _description, ...shape } = schema;
  if (shape.allOf) {
    const refs = shape.allOf.filter((s) => s.$ref).map((s) => refName(s.$ref!));
    const objects = shape.allOf.filter((s) => !s.$ref);
    if (objects.length === 1 && refs.length + 1 === shape.allOf.length && objects[0]!.type === 'object') {
      return `${doc}export interface ${name} extends ${refs.join(', ')} ${objectType(objects[0]!, '', where)}\n`;
    }
  }
  if (shape.type === 'object' && shape.properties && Object.keys(shape.properties).length > 0) {
    return `${doc}export interface ${name} ${objectType(shape, '', where)}\n`;
  }
  return `${doc}export type ${name} = ${typeOf(shape, '', where)};\n`;
}

function operations(doc: OpenApiDocument): Map<string, Operation> {
  return new Map(Object.values(doc.paths).flatMap((byMethod) => Object.values(byMethod)).map((op) => [op.operationId, op]));
}

function need<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`sdk-types: the document has no ${what}; update the tables in scripts/sdk-types.ts.`);
  return value;
}

/** The params type of a list's query parameters. */
function queryDeclaration(name: string, op: Operation): string {
  const params = (op.parameters ?? []).filter((p) => p.in === 'query');
  if (params.length === 0) throw new Error(`sdk-types: ${op.operationId} has no query parameters.`);
  const lines = params.map((p) => {
    const type = p.schema.type === 'string' && typeof p.schema.pattern === 'string' && DIGITS_ONLY.test(p.schema.pattern) ? 'number' : typeOf(p.schema, '  ', `${op.operationId}?${p.name}`);
    return `${jsdoc(p.description, '  ')}  ${key(p.name)}${p.required ? '' : '?'}: ${type};\n`;
  });
  return `/** The query of ${op.operationId}. */\nexport interface ${name} {\n${lines.join('')}}\n`;
}

/** The whole generated file, from the document. */
export function renderSdkTypes(doc: OpenApiDocument): string {
  const ops = operations(doc);
  const out: string[] = [
    '// Generated by `npm run generate` (scripts/sdk-types.ts) from the /v1 OpenAPI document, which the\n',
    '// TypeBox schemas of gateway/rest/*/schemas.ts describe. Do not edit: change the schemas, then run it.\n',
    '// The API\'s JSON: snake_case, amounts as integers in minor units of their currency, times as ISO 8601 strings.\n',
    '\n// ---------------------------------------------------------------- objects\n\n',
  ];
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    out.push(declaration(RENAMED[name] ?? name, schema, `#/components/schemas/${name}`), '\n');
  }
  out.push('// ---------------------------------------------------------------- answers that are not objects above\n\n');
  for (const [operationId, name] of Object.entries(RESPONSES)) {
    const op = need(ops.get(operationId), `operation ${operationId}`);
    const ok = need(Object.entries(op.responses).find(([status]) => status.startsWith('2'))?.[1], `2xx answer of ${operationId}`);
    out.push(declaration(name, need(ok.content?.['application/json']?.schema, `JSON answer of ${operationId}`), operationId), '\n');
  }
  out.push('// ---------------------------------------------------------------- request bodies\n\n');
  for (const [operationId, name] of Object.entries(BODIES)) {
    const op = need(ops.get(operationId), `operation ${operationId}`);
    const schema = need(op.requestBody?.content['application/json']?.schema, `JSON body of ${operationId}`);
    out.push(declaration(name, { ...schema, description: `The body of ${operationId}.` }, operationId), '\n');
  }
  out.push('// ---------------------------------------------------------------- list queries\n\n');
  for (const [operationId, name] of Object.entries(QUERIES)) {
    out.push(queryDeclaration(name, need(ops.get(operationId), `operation ${operationId}`)), '\n');
  }
  out.push('// ---------------------------------------------------------------- parts named for convenience\n\n');
  for (const [name, type, doc] of PARTS) out.push(`/** ${doc} */\nexport type ${name} = ${type};\n\n`);
  return out.join('').replace(/\n+$/, '\n');
}
