// checkout.v1.OrderService over every wire it is offered on, against real Postgres and a real
// listening socket: gRPC (a @grpc/grpc-js client over h2c), Connect JSON and binary and gRPC-Web
// over HTTP/1.1, and REST on the same port (proving listen.ts's HTTP/2-preface sniffing).
import net, { type AddressInfo, type Server } from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { create, fromBinary, toBinary, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { AnySchema, anyUnpack } from '@bufbuild/protobuf/wkt';
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import { Code, ConnectError, createClient, type Client, type Transport } from '@connectrpc/connect';
import { createConnectTransport, createGrpcWebTransport } from '@connectrpc/connect-node';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCore } from '../src/composition/core.ts';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { buildGateway } from '../gateway/app.ts';
import { listenH1AndH2c } from '../gateway/listen.ts';
import {
  CreateOrderRequestSchema,
  CreateOrderResponseSchema,
  GetOrderRequestSchema,
  GetOrderResponseSchema,
  ListOrdersRequestSchema,
  ListOrdersResponseSchema,
  OrderService,
  OrderStatus,
} from '../src/gen/checkout/v1/order_pb.ts';
import { ErrorDetailSchema, type ErrorDetail } from '../src/gen/checkout/v1/errors_pb.ts';
import { createTestDatabase, type TestDatabase } from './support/database.ts';
import { orderBody, orderRequest } from './support/order-fixtures.ts';

const API_URL = 'http://api.grpc.test';
const CHECKOUT_URL = 'http://pay.grpc.test';

let db: TestDatabase;
let core: ReturnType<typeof createCore>;
let app: FastifyInstance;
let server: Server;
let baseUrl: string;
let port: number;
let shop: SandboxCredentials;
let otherShop: SandboxCredentials;
const internalErrors: unknown[] = [];

/** Resolves with fn's result, or rejects after ms: no hook may wait forever. */
async function within<T>(ms: number, what: string, fn: () => Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      fn(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not finish within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

beforeAll(async () => {
  db = await createTestDatabase();
  core = createCore({ knex: db.knex, apiBaseUrl: API_URL, checkoutHost: CHECKOUT_URL, onInternalError: (err) => internalErrors.push(err) });
  app = await buildGateway({ routes: core.routes, publicUrl: API_URL });
  await app.ready();
  server = await listenH1AndH2c(app.server, core.routes, 0, '127.0.0.1');
  port = (server.address() as AddressInfo).port;
  baseUrl = `http://127.0.0.1:${port}`;
  shop = (await core.createSandbox({ name: 'gRPC shop', settlementCurrency: 'EUR' }))!;
  otherShop = (await core.createSandbox({ name: 'Other shop', settlementCurrency: 'EUR' }))!;
});

afterAll(async () => {
  // Every client below is closed by its own describe block; a connection left open must not hang the file.
  if (server) await within(10_000, 'server.close()', () => new Promise<void>((resolve) => server.close(() => resolve())));
  await app?.close();
  await db?.drop();
});

let keyCounter = 0;
const newIdempotencyKey = () => `idem-${process.pid}-${Date.now()}-${++keyCounter}`;

// ---------------------------------------------------------------------------------------------
// gRPC with @grpc/grpc-js: a generic client whose (de)serializers are protobuf-es toBinary/fromBinary.

function method<I extends DescMessage, O extends DescMessage>(name: string, input: I, output: O): grpc.MethodDefinition<MessageShape<I>, MessageShape<O>> {
  return {
    path: `/checkout.v1.OrderService/${name}`,
    requestStream: false,
    responseStream: false,
    requestSerialize: (message) => Buffer.from(toBinary(input, message)),
    requestDeserialize: (bytes) => fromBinary(input, bytes),
    responseSerialize: (message) => Buffer.from(toBinary(output, message)),
    responseDeserialize: (bytes) => fromBinary(output, bytes),
  };
}

const ORDER_SERVICE_DEFINITION = {
  CreateOrder: method('CreateOrder', CreateOrderRequestSchema, CreateOrderResponseSchema),
  GetOrder: method('GetOrder', GetOrderRequestSchema, GetOrderResponseSchema),
  ListOrders: method('ListOrders', ListOrdersRequestSchema, ListOrdersResponseSchema),
} satisfies grpc.ServiceDefinition;

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  callback: (err: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

/** What one gRPC call brought back: the response or the error, plus headers (initial metadata) and trailers. */
interface GrpcOutcome<Res> {
  readonly response?: Res;
  readonly error?: grpc.ServiceError;
  readonly headers: grpc.Metadata;
  readonly status: grpc.StatusObject;
}

function unary<Req, Res>(fn: UnaryMethod<Req, Res>, request: Req, metadata: grpc.Metadata): Promise<GrpcOutcome<Res>> {
  return new Promise((resolve) => {
    let headers = new grpc.Metadata();
    let result: { response?: Res; error?: grpc.ServiceError } | undefined;
    let status: grpc.StatusObject | undefined;
    const settle = () => {
      if (result && status) resolve({ ...result, headers, status });
    };
    const call = fn(request, metadata, (err, response) => {
      result = err ? { error: err } : { response };
      settle();
    });
    call.on('metadata', (m: grpc.Metadata) => {
      headers = m;
    });
    call.on('status', (s: grpc.StatusObject) => {
      status = s;
      settle();
    });
  });
}

function grpcMetadata(secretKey: string, idempotencyKey?: string): grpc.Metadata {
  const metadata = new grpc.Metadata();
  metadata.set('authorization', `Bearer ${secretKey}`);
  if (idempotencyKey) metadata.set('idempotency-key', idempotencyKey);
  return metadata;
}

/**
 * Decodes the google.rpc.Status carried in "grpc-status-details-bin" (code = 1, message = 2,
 * details = 3 as google.protobuf.Any) and unpacks our ErrorDetail from it.
 */
function decodeStatusDetails(bytes: Uint8Array): { code: number; message: string; details: ErrorDetail[] } {
  const reader = new BinaryReader(bytes);
  const status = { code: 0, message: '', details: [] as ErrorDetail[] };
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field === 1 && wireType === WireType.Varint) status.code = reader.int32();
    else if (field === 2 && wireType === WireType.LengthDelimited) status.message = reader.string();
    else if (field === 3 && wireType === WireType.LengthDelimited) {
      const detail = anyUnpack(fromBinary(AnySchema, reader.bytes()), ErrorDetailSchema);
      if (detail) status.details.push(detail);
    } else reader.skip(wireType);
  }
  return status;
}

function errorDetailOf(error: grpc.ServiceError): ErrorDetail | undefined {
  const [raw] = error.metadata.get('grpc-status-details-bin');
  if (raw === undefined) return undefined;
  const status = decodeStatusDetails(typeof raw === 'string' ? Buffer.from(raw, 'base64') : raw);
  expect(status.code).toBe(error.code);
  // connect-node percent-encodes grpc-message with encodeURIComponent, grpc-js decodes it with
  // decodeURI, so reserved characters (":" → "%3A", ";" → "%3B") reach grpc-js callers still encoded.
  // The exact text travels in grpc-status-details-bin.
  expect(decodeURIComponent(error.details)).toBe(status.message);
  return status.details[0];
}

describe('gRPC (@grpc/grpc-js over h2c)', () => {
  interface OrderServiceGrpcClient extends grpc.Client {
    CreateOrder: UnaryMethod<MessageShape<typeof CreateOrderRequestSchema>, MessageShape<typeof CreateOrderResponseSchema>>;
    GetOrder: UnaryMethod<MessageShape<typeof GetOrderRequestSchema>, MessageShape<typeof GetOrderResponseSchema>>;
    ListOrders: UnaryMethod<MessageShape<typeof ListOrdersRequestSchema>, MessageShape<typeof ListOrdersResponseSchema>>;
  }
  let client: OrderServiceGrpcClient;
  const call = <K extends 'CreateOrder' | 'GetOrder' | 'ListOrders'>(name: K) => client[name].bind(client) as OrderServiceGrpcClient[K];

  beforeAll(() => {
    const OrderServiceClient = grpc.makeGenericClientConstructor(ORDER_SERVICE_DEFINITION, 'OrderService');
    client = new OrderServiceClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()) as unknown as OrderServiceGrpcClient;
  });
  afterAll(() => client?.close());

  it('CreateOrder returns a pending order; a repeat with the same idempotency-key replays it and says so in the headers', async () => {
    const key = newIdempotencyKey();
    const first = await unary(call('CreateOrder'), orderRequest({ reference: 'INV-2001' }), grpcMetadata(shop.test_secret_key, key));
    expect(first.error).toBeUndefined();
    expect(first.status.code).toBe(grpc.status.OK);
    const order = first.response!.order!;
    expect(order.id).toMatch(/^ord_/);
    expect(order.status).toBe(OrderStatus.PENDING);
    expect(order.amount).toBe(2500n);
    expect(order.currency).toBe('EUR');
    expect(order.reference).toBe('INV-2001');
    expect(order.lineItems.map((item) => item.name)).toEqual(['Green tea', 'Teapot']);
    expect(order.checkoutUrl).toBe(`${CHECKOUT_URL}/c/${order.id.slice('ord_'.length)}`);
    expect(order.livemode).toBe(false);
    expect(first.headers.get('idempotent-replayed')).toEqual([]);

    const replay = await unary(call('CreateOrder'), orderRequest({ reference: 'INV-2001' }), grpcMetadata(shop.test_secret_key, key));
    expect(replay.error).toBeUndefined();
    expect(replay.response!.order!.id).toBe(order.id);
    // Initial metadata (response headers), not trailers.
    expect(replay.headers.get('idempotent-replayed')).toEqual(['true']);
    expect(replay.status.metadata.get('idempotent-replayed')).toEqual([]);

    const got = await unary(call('GetOrder'), create(GetOrderRequestSchema, { id: order.id }), grpcMetadata(shop.test_secret_key));
    expect(got.error).toBeUndefined();
    expect(got.response!.order!.id).toBe(order.id);
    expect(got.response!.order!.status).toBe(OrderStatus.PENDING);
    expect(got.response!.order!.returnUrl).toBe('https://shop.example/thanks');

    const listed = await unary(call('ListOrders'), create(ListOrdersRequestSchema, { reference: 'INV-2001' }), grpcMetadata(shop.test_secret_key));
    expect(listed.error).toBeUndefined();
    expect(listed.response!.orders.map((o) => o.id)).toContain(order.id);
  });

  it('an unknown key is UNAUTHENTICATED, with the ErrorDetail in grpc-status-details-bin', async () => {
    const { error } = await unary(call('CreateOrder'), orderRequest(), grpcMetadata('sk_test_thisKeyDoesNotExist000000000000'));
    expect(error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(errorDetailOf(error!)).toMatchObject({ type: 'authentication_error', code: 'api_key_invalid' });

    const missing = await unary(call('GetOrder'), create(GetOrderRequestSchema, { id: 'ord_x' }), new grpc.Metadata());
    expect(missing.error?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(errorDetailOf(missing.error!)).toMatchObject({ type: 'authentication_error', code: 'api_key_missing' });
  });

  it('a bad currency is INVALID_ARGUMENT with checkout.v1.ErrorDetail in the grpc-status-details-bin trailer', async () => {
    const { error, status } = await unary(call('CreateOrder'), orderRequest({ currency: 'ZZZ', lineItems: [] }), grpcMetadata(shop.test_secret_key, newIdempotencyKey()));
    expect(error?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(error?.details).toMatch(/currency/i);
    expect(status.metadata.get('grpc-status-details-bin')).toHaveLength(1);
    expect(errorDetailOf(error!)).toEqual(expect.objectContaining({ type: 'invalid_request_error', code: 'currency_invalid', param: 'currency' }));
  });

  it("another merchant's order is NOT_FOUND", async () => {
    const created = await unary(call('CreateOrder'), orderRequest({ reference: 'OTHER-1' }), grpcMetadata(otherShop.test_secret_key, newIdempotencyKey()));
    const otherId = created.response!.order!.id;
    const { error } = await unary(call('GetOrder'), create(GetOrderRequestSchema, { id: otherId }), grpcMetadata(shop.test_secret_key));
    expect(error?.code).toBe(grpc.status.NOT_FOUND);
    expect(errorDetailOf(error!)).toMatchObject({ type: 'invalid_request_error', code: 'resource_missing' });
    // And the owner still sees it.
    const own = await unary(call('GetOrder'), create(GetOrderRequestSchema, { id: otherId }), grpcMetadata(otherShop.test_secret_key));
    expect(own.response?.order?.id).toBe(otherId);
  });
});

// ---------------------------------------------------------------------------------------------
// Connect (JSON, binary) and gRPC-Web over HTTP/1.1, with @connectrpc/connect-node.

const transports: Record<string, () => Transport> = {
  'Connect JSON over HTTP/1.1': () => createConnectTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: false }),
  'Connect binary over HTTP/1.1': () => createConnectTransport({ baseUrl, httpVersion: '1.1', useBinaryFormat: true }),
  'gRPC-Web over HTTP/1.1': () => createGrpcWebTransport({ baseUrl, httpVersion: '1.1' }),
};

describe.each(Object.keys(transports))('%s', (name) => {
  let client: Client<typeof OrderService>;
  const auth = (key: string, idempotencyKey?: string) => ({
    headers: { authorization: `Bearer ${key}`, ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}) },
  });

  async function connectErrorOf(promise: Promise<unknown>): Promise<ConnectError> {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ConnectError);
    return err as ConnectError;
  }

  beforeAll(() => {
    client = createClient(OrderService, transports[name]!());
  });

  it('creates, replays and gets an order', async () => {
    const key = newIdempotencyKey();
    const headers: Headers[] = [];
    const first = await client.createOrder(orderRequest({ reference: `REF-${name}` }), { ...auth(shop.test_secret_key, key), onHeader: (h) => headers.push(h) });
    expect(first.order!.id).toMatch(/^ord_/);
    expect(first.order!.status).toBe(OrderStatus.PENDING);
    expect(first.order!.amount).toBe(2500n);
    expect(headers[0]!.get('idempotent-replayed')).toBeNull();

    const replay = await client.createOrder(orderRequest({ reference: `REF-${name}` }), { ...auth(shop.test_secret_key, key), onHeader: (h) => headers.push(h) });
    expect(replay.order!.id).toBe(first.order!.id);
    expect(headers[1]!.get('idempotent-replayed')).toBe('true');

    const got = await client.getOrder({ id: first.order!.id }, auth(shop.test_secret_key));
    expect(got.order!.id).toBe(first.order!.id);
    expect(got.order!.reference).toBe(`REF-${name}`);
  });

  it('errors arrive as ConnectError with code and ErrorDetail', async () => {
    const badKey = await connectErrorOf(client.getOrder({ id: 'ord_x' }, auth('sk_test_thisKeyDoesNotExist000000000000')));
    expect(badKey.code).toBe(Code.Unauthenticated);
    expect(badKey.findDetails(ErrorDetailSchema)).toEqual([expect.objectContaining({ type: 'authentication_error', code: 'api_key_invalid' })]);

    const badCurrency = await connectErrorOf(client.createOrder(orderRequest({ currency: 'ZZZ', lineItems: [] }), auth(shop.test_secret_key, newIdempotencyKey())));
    expect(badCurrency.code).toBe(Code.InvalidArgument);
    expect(badCurrency.rawMessage).toMatch(/currency/i);
    expect(badCurrency.findDetails(ErrorDetailSchema)).toEqual([
      expect.objectContaining({ type: 'invalid_request_error', code: 'currency_invalid', param: 'currency' }),
    ]);

    const other = await client.createOrder(orderRequest({ reference: 'OTHER-2' }), auth(otherShop.test_secret_key, newIdempotencyKey()));
    const notFound = await connectErrorOf(client.getOrder({ id: other.order!.id }, auth(shop.test_secret_key)));
    expect(notFound.code).toBe(Code.NotFound);
    expect(notFound.findDetails(ErrorDetailSchema)).toEqual([expect.objectContaining({ code: 'resource_missing' })]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('REST on the same port', () => {
  it('POST /v1/orders over HTTP/1.1 answers 201, so HTTP/1.1 is still routed to Fastify', async () => {
    const res = await fetch(`${baseUrl}/v1/orders`, {
      method: 'POST',
      headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json', 'idempotency-key': newIdempotencyKey() },
      body: JSON.stringify(orderBody({ amount: 990, reference: 'REST-1', line_items: [] })),
    });
    expect(res.status).toBe(201);
    const body = (await res.json()) as { id: string; status: string; amount: number };
    expect(body.id).toMatch(/^ord_/);
    expect(body.status).toBe('pending');
    expect(res.headers.get('request-id')).toMatch(/^req_/);

    // The order REST made is the one gRPC reads.
    const transport = createConnectTransport({ baseUrl, httpVersion: '1.1' });
    const got = await createClient(OrderService, transport).getOrder({ id: body.id }, { headers: { authorization: `Bearer ${shop.test_secret_key}` } });
    expect(got.order!.amount).toBe(990n);
  });

  it('reported no internal errors', () => {
    expect(internalErrors).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('listenH1AndH2c', () => {
  it('routes an HTTP/2 preface that arrives split over several TCP segments to the HTTP/2 server', async () => {
    const socket = net.connect({ port, host: '127.0.0.1', noDelay: true });
    try {
      await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
      const received: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => received.push(chunk));
      const preface = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n');
      const emptySettings = Buffer.from([0, 0, 0, 0x04, 0, 0, 0, 0, 0]);
      socket.write(preface.subarray(0, 5)); // "PRI *" alone
      await new Promise((r) => setTimeout(r, 100));
      socket.write(Buffer.concat([preface.subarray(5), emptySettings]));
      await within(15_000, 'an answer from the server', async () => {
        while (Buffer.concat(received).length < 9) await new Promise((r) => setTimeout(r, 10));
      });
      const answer = Buffer.concat(received);
      // An HTTP/2 server opens with a SETTINGS frame (type 0x4); the HTTP/1.1 server would answer "HTTP/1.1 400".
      expect(answer.subarray(0, 8).toString('latin1')).not.toMatch(/^HTTP\//);
      expect(answer[3]).toBe(0x04);
    } finally {
      socket.destroy();
    }
  });

  it('close() completes while an HTTP/1.1 keep-alive connection and a gRPC channel are still open', async () => {
    // A gateway of its own: the listener is the gateway's HTTP server, so one gateway serves one port.
    const ownApp = await buildGateway({ routes: core.routes, publicUrl: API_URL });
    await ownApp.ready();
    const own = await listenH1AndH2c(ownApp.server, core.routes, 0, '127.0.0.1');
    const ownPort = (own.address() as AddressInfo).port;
    const rest = await fetch(`http://127.0.0.1:${ownPort}/healthz`); // undici keeps the connection alive
    expect(rest.status).toBe(200);
    await rest.text();
    const GrpcClient = grpc.makeGenericClientConstructor(ORDER_SERVICE_DEFINITION, 'OrderService');
    const grpcClient = new GrpcClient(`127.0.0.1:${ownPort}`, grpc.credentials.createInsecure()) as unknown as {
      GetOrder: UnaryMethod<MessageShape<typeof GetOrderRequestSchema>, MessageShape<typeof GetOrderResponseSchema>>;
      close(): void;
    };
    try {
      const outcome = await unary(grpcClient.GetOrder.bind(grpcClient), create(GetOrderRequestSchema, { id: 'ord_nope' }), grpcMetadata(shop.test_secret_key));
      expect(outcome.error?.code).toBe(grpc.status.NOT_FOUND);
      // Deadline for the outcome only: without the fix close() never completes (the gRPC channel stays open for 30 minutes).
      await within(15_000, 'close() with open client connections', () => new Promise<void>((resolve, reject) => own.close((err) => (err ? reject(err) : resolve()))));
    } finally {
      grpcClient.close();
      await ownApp.close();
    }
  });
});
