// The server under test of bench/floor.ts: the least a server on the project's fixed stack does to
// create one order, in steps. FLOOR_VARIANT picks the step:
//
//   node-http             node:http; reads the body, JSON.parse, answers a fixed ~600-byte order
//   fastify               Fastify, one route with a body and a response schema
//   fastify+pg            + one INSERT per request through a raw pg Pool (max 20), a named prepared statement
//   fastify+knex          + the INSERT through knex's query builder instead (the project's createDatabase)
//   fastify+knex+modules  + the project's composition, gateway and service modules loaded (not started)
//
// Environment: FLOOR_VARIANT, PORT, HOST (default 127.0.0.1), DATABASE_URL (the pg variants).
// Prints "floor server ready" on stdout once it listens; SIGTERM closes it.
import { randomUUID } from 'node:crypto';
import http from 'node:http';

export const FLOOR_VARIANTS = ['node-http', 'fastify', 'fastify+pg', 'fastify+knex', 'fastify+knex+modules'] as const;
export type FloorVariant = (typeof FLOOR_VARIANTS)[number];

/** The orders table of the floor database: the columns of the project's orders row, give or take. */
export const FLOOR_TABLE_SQL = `CREATE TABLE orders (
  id text PRIMARY KEY,
  merchant_id text NOT NULL,
  livemode boolean NOT NULL,
  reference text NOT NULL,
  amount bigint NOT NULL CHECK (amount > 0),
  currency char(3) NOT NULL,
  status text NOT NULL,
  line_items jsonb NOT NULL,
  return_url text,
  checkout_url text NOT NULL,
  method text,
  settlement_currency char(3),
  settlement_amount bigint,
  version integer NOT NULL,
  capture_method text NOT NULL,
  amount_refunded bigint NOT NULL,
  amount_captured bigint,
  expires_at timestamptz NOT NULL,
  customer_id text,
  client_secret_hash text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX orders_list ON orders (merchant_id, livemode, created_at DESC, id DESC);
CREATE INDEX orders_by_reference ON orders (merchant_id, livemode, reference, created_at DESC, id DESC);`;

interface OrderInput {
  amount: number;
  currency: string;
  reference: string;
  line_items?: { name: string; amount: number }[];
  return_url?: string;
}

const MERCHANT = 'mer_0floor0benchmark0merchant0';
const CREATED = '2025-01-01T00:00:00.000Z';

/** The answer of every variant: an order as the REST API shows one, about 600 bytes of JSON. */
const ORDER = {
  id: 'ord_2x4Jb8HqN1cVt6WmZ0pLrQ9s',
  object: 'order',
  reference: 'INV-1001',
  amount: 2500,
  currency: 'EUR',
  status: 'pending',
  checkout_url: 'http://127.0.0.1:3000/checkout/ord_2x4Jb8HqN1cVt6WmZ0pLrQ9s',
  line_items: [
    { name: 'Green tea', amount: 1500 },
    { name: 'Teapot', amount: 1000 },
  ],
  return_url: 'https://shop.example/thanks',
  method: null,
  settlement: null,
  refunds: [],
  amount_refunded: 0,
  capture_method: 'automatic',
  amount_captured: null,
  authorization_expires_at: null,
  disputes: [],
  attempts: [],
  created: CREATED,
  expires_at: '2025-01-02T00:00:00.000Z',
  livemode: false,
  payment_link: null,
  subscription: null,
  subscription_cycle: null,
  customer: null,
  client_secret: 'ord_2x4Jb8HqN1cVt6WmZ0pLrQ9s_secret_7fKqP2mX9vLw3cZr8T',
};
const ORDER_BYTES = Buffer.from(JSON.stringify(ORDER));

const nullable = (type: string) => ({ type: [type, 'null'] });
const LINE_ITEM = { type: 'object', required: ['name', 'amount'], additionalProperties: false, properties: { name: { type: 'string', minLength: 1, maxLength: 255 }, amount: { type: 'integer', minimum: 1 } } };
const BODY_SCHEMA = {
  type: 'object',
  required: ['amount', 'currency', 'reference'],
  additionalProperties: false,
  properties: {
    amount: { type: 'integer', minimum: 1, maximum: 99_999_999_999 },
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    reference: { type: 'string', minLength: 1, maxLength: 255 },
    line_items: { type: 'array', maxItems: 100, items: LINE_ITEM },
    return_url: { type: 'string', maxLength: 2048 },
    expires_at: { type: 'string', format: 'date-time' },
    capture_method: { type: 'string', enum: ['automatic', 'manual'] },
    customer: { type: 'string' },
  },
};
const RESPONSE_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    object: { type: 'string' },
    reference: { type: 'string' },
    amount: { type: 'integer' },
    currency: { type: 'string' },
    status: { type: 'string' },
    checkout_url: { type: 'string' },
    line_items: { type: 'array', items: LINE_ITEM },
    return_url: nullable('string'),
    method: nullable('string'),
    settlement: { anyOf: [{ type: 'null' }, { type: 'object', properties: { currency: { type: 'string' }, amount: { type: 'integer' } } }] },
    refunds: { type: 'array', items: { type: 'object' } },
    amount_refunded: { type: 'integer' },
    capture_method: { type: 'string' },
    amount_captured: nullable('integer'),
    authorization_expires_at: nullable('string'),
    disputes: { type: 'array', items: { type: 'object' } },
    attempts: { type: 'array', items: { type: 'object' } },
    created: { type: 'string' },
    expires_at: { type: 'string' },
    livemode: { type: 'boolean' },
    payment_link: nullable('string'),
    subscription: nullable('string'),
    subscription_cycle: nullable('integer'),
    customer: nullable('string'),
    client_secret: { type: 'string' },
  },
};

/** The orders row of a request body, in FLOOR_TABLE_SQL's column order. */
function orderRow(body: OrderInput): Record<string, unknown> {
  const id = `ord_${randomUUID()}`;
  const now = new Date();
  return {
    id,
    merchant_id: MERCHANT,
    livemode: false,
    reference: body.reference,
    amount: body.amount,
    currency: body.currency,
    status: 'pending',
    line_items: JSON.stringify(body.line_items ?? []),
    return_url: body.return_url ?? null,
    checkout_url: `http://127.0.0.1:3000/checkout/${id}`,
    method: null,
    settlement_currency: null,
    settlement_amount: null,
    version: 1,
    capture_method: 'automatic',
    amount_refunded: 0,
    amount_captured: null,
    expires_at: new Date(now.getTime() + 86_400_000),
    customer_id: null,
    client_secret_hash: 'f3b1c2d4e5a6978899aabbccddeeff00112233445566778899aabbccddeeff00',
    created_at: now,
    updated_at: now,
  };
}

/** Something that closes on SIGTERM. */
type Closer = () => Promise<void>;

function nodeHttpServer(): { listen(port: number, host: string): Promise<void>; close: Closer } {
  const server = http.createServer((req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/orders') {
      res.writeHead(404).end();
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      let body: OrderInput;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as OrderInput;
      } catch {
        res.writeHead(400).end();
        return;
      }
      if (typeof body.amount !== 'number') {
        res.writeHead(400).end();
        return;
      }
      res.writeHead(201, { 'content-type': 'application/json; charset=utf-8', 'content-length': ORDER_BYTES.length }).end(ORDER_BYTES);
    });
  });
  return {
    listen: (port, host) => new Promise<void>((resolve) => server.listen(port, host, resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function fastifyServer(variant: Exclude<FloorVariant, 'node-http'>): Promise<{ listen(port: number, host: string): Promise<void>; close: Closer }> {
  const { default: Fastify } = await import('fastify');
  const closers: Closer[] = [];
  let insert: (body: OrderInput) => Promise<void> = async () => undefined;
  const url = process.env.DATABASE_URL;
  if (variant !== 'fastify' && !url) throw new Error(`${variant} needs DATABASE_URL`);

  if (variant === 'fastify+pg') {
    const { default: pg } = await import('pg');
    const pool = new pg.Pool({ connectionString: url, max: 20 });
    const columns = Object.keys(orderRow({ amount: 1, currency: 'EUR', reference: 'x' }));
    const text = `INSERT INTO orders (${columns.join(', ')}) VALUES (${columns.map((_, i) => `$${i + 1}`).join(', ')})`;
    insert = async (body) => {
      await pool.query({ name: 'floor_insert_order', text, values: Object.values(orderRow(body)) });
    };
    closers.push(() => pool.end());
  } else if (variant === 'fastify+knex' || variant === 'fastify+knex+modules') {
    const { createDatabase } = await import('../src/kernel/adapters/postgres/database.ts');
    const knex = createDatabase({ url: url!, poolMax: 20 });
    insert = async (body) => {
      await knex('orders').insert(orderRow(body));
    };
    closers.push(() => knex.destroy());
  }
  if (variant === 'fastify+knex+modules') {
    // Loaded, never started: the footprint of the real code's modules (what `checkout serve` imports).
    await import('../src/composition/core.ts');
    await import('../gateway/app.ts');
    await import('../server/service.ts');
  }

  const app = Fastify({ logger: false });
  app.post<{ Body: OrderInput }>('/v1/orders', { schema: { body: BODY_SCHEMA, response: { 201: RESPONSE_SCHEMA } } }, async (request, reply) => {
    await insert(request.body);
    return reply.code(201).send(ORDER);
  });
  return {
    listen: async (port, host) => {
      await app.listen({ port, host });
    },
    close: async () => {
      await app.close();
      for (const close of closers) await close();
    },
  };
}

async function main(): Promise<void> {
  const variant = process.env.FLOOR_VARIANT as FloorVariant;
  if (!FLOOR_VARIANTS.includes(variant)) throw new Error(`FLOOR_VARIANT must be one of ${FLOOR_VARIANTS.join(', ')}, got "${variant}"`);
  const server = variant === 'node-http' ? nodeHttpServer() : await fastifyServer(variant);
  await server.listen(Number(process.env.PORT ?? 3000), process.env.HOST ?? '127.0.0.1');
  process.once('SIGTERM', () => {
    server.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`closing: ${String(err)}\n`);
        process.exit(1);
      },
    );
  });
  process.stdout.write('floor server ready\n');
}

// Run only as the child process, not when bench/floor.ts imports the variant names.
if (import.meta.main) {
  main().catch((err: unknown) => {
    process.stderr.write(`bench/floor-server: ${(err as Error).stack ?? String(err)}\n`);
    process.exit(1);
  });
}
