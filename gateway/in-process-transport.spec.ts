// The in-process transport answers as connect's own router transport would in what the REST gateway
// relies on (errors, deadlines, aborts, headers and trailers, unimplemented methods); the shared cases
// run against both, over a fake OrderService.
import { create } from '@bufbuild/protobuf';
import {
  Code,
  ConnectError,
  createClient,
  createContextKey,
  createContextValues,
  createRouterTransport,
  type ConnectRouter,
  type HandlerContext,
  type Transport,
} from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import { ErrorDetailSchema } from '../src/gen/checkout/v1/errors_pb.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { TestHelperService } from '../src/gen/checkout/v1/test_helpers_pb.ts';
import { EventService } from '../src/gen/checkout/v1/webhook_pb.ts';
import { createInProcessTransport } from './in-process-transport.ts';

const TENANT = createContextKey<string | undefined>(undefined, { description: 'a value the caller hands to the implementation' });

/** What the fake implementation saw of its last call. */
interface Seen {
  context?: HandlerContext;
  calls: number;
}

/** A fake OrderService: getOrder does what the order id says; listOrders stands for a real call's headers. */
function fakeRoutes(seen: Seen) {
  return (router: ConnectRouter) => {
    router.service(OrderService, {
      async getOrder(request, context) {
        seen.context = context;
        seen.calls += 1;
        context.responseHeader.set('ratelimit-remaining', '41');
        switch (request.id) {
          case 'ord_missing':
            throw new ConnectError('No such order.', Code.NotFound, { 'x-error-meta': 'kept' }, [
              { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { type: 'invalid_request_error', code: 'resource_missing', param: 'id' }) },
            ]);
          case 'ord_crash':
            throw new TypeError('cannot read properties of undefined');
          case 'ord_slow':
            // Ends only when the call's signal does, as a well-behaved implementation.
            return new Promise((_, reject) => context.signal.addEventListener('abort', () => reject(context.signal.reason)));
          case 'ord_deaf':
            // Never ends and never looks at the signal.
            return new Promise(() => {});
          default:
            context.responseTrailer.set('x-trailer', 'end');
            return { order: { id: request.id, reference: context.requestHeader.get('x-reference') ?? '' } };
        }
      },
      listOrders() {
        // A synchronous throw of a non-ConnectError.
        throw new Error('boom');
      },
    });
  };
}

async function errorOf(call: Promise<unknown>): Promise<ConnectError> {
  try {
    await call;
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    return err as ConnectError;
  }
  throw new Error('the call succeeded');
}

const transports: [string, (routes: (router: ConnectRouter) => void) => Transport][] = [
  ['in-process', createInProcessTransport],
  ["connect's router transport", (routes) => createRouterTransport(routes)],
];

describe.each(transports)('%s', (_name, createTransport) => {
  const setup = () => {
    const seen: Seen = { calls: 0 };
    return { seen, client: createClient(OrderService, createTransport(fakeRoutes(seen))) };
  };

  it('passes request headers in, and response headers and trailers out', async () => {
    const { client } = setup();
    let header: Headers | undefined;
    let trailer: Headers | undefined;
    const res = await client.getOrder({ id: 'ord_1' }, { headers: { 'x-reference': 'R-1' }, onHeader: (h) => (header = h), onTrailer: (t) => (trailer = t) });
    expect(res.order).toMatchObject({ id: 'ord_1', reference: 'R-1' });
    expect(header?.get('ratelimit-remaining')).toBe('41');
    expect(trailer?.get('x-trailer')).toBe('end');
  });

  it('keeps a ConnectError\'s code, message and details, with the response headers set before it in its metadata', async () => {
    const { client } = setup();
    const err = await errorOf(client.getOrder({ id: 'ord_missing' }));
    expect(err.code).toBe(Code.NotFound);
    expect(err.rawMessage).toBe('No such order.');
    expect(err.findDetails(ErrorDetailSchema)).toMatchObject([{ code: 'resource_missing', param: 'id' }]);
    expect(err.metadata.get('x-error-meta')).toBe('kept');
    // So the REST answer carries the rate-limit headers on an error too (test/rate-limits.test.ts).
    expect(err.metadata.get('ratelimit-remaining')).toBe('41');
  });

  it('answers Code.Internal for a fault that is not a ConnectError, thrown or rejected', async () => {
    const { client } = setup();
    const rejected = await errorOf(client.getOrder({ id: 'ord_crash' }));
    expect([rejected.code, rejected.rawMessage]).toEqual([Code.Internal, 'internal error']);
    const thrown = await errorOf(client.listOrders({}));
    expect([thrown.code, thrown.rawMessage]).toEqual([Code.Internal, 'internal error']);
  });

  it('ends the call with Code.DeadlineExceeded at timeoutMs, and aborts the implementation\'s signal', async () => {
    const { client, seen } = setup();
    // ord_slow ends only when its signal aborts: DeadlineExceeded shows the deadline fired. How long after
    // timeoutMs it does is a figure, printed by bench/transport.ts (npm run bench:transport).
    const err = await errorOf(client.getOrder({ id: 'ord_slow' }, { timeoutMs: 50 }));
    expect(err.code).toBe(Code.DeadlineExceeded);
    expect(seen.context?.signal.aborted).toBe(true);
  });

  it('ends the call at the deadline even when the implementation never looks at its signal', async () => {
    const { client } = setup();
    const err = await errorOf(client.getOrder({ id: 'ord_deaf' }, { timeoutMs: 50 }));
    expect(err.code).toBe(Code.DeadlineExceeded);
  });

  it('ends the call with Code.Canceled when the caller aborts, and aborts the implementation\'s signal', async () => {
    const { client, seen } = setup();
    const controller = new AbortController();
    const call = client.getOrder({ id: 'ord_deaf' }, { signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    const err = await errorOf(call);
    expect(err.code).toBe(Code.Canceled);
    expect(seen.context?.signal.aborted).toBe(true);
  });

  it('answers Code.Unimplemented for a method its service does not implement, and for a service nobody registered', async () => {
    const { client } = setup();
    expect((await errorOf(client.createOrder({}))).code).toBe(Code.Unimplemented);
    const helpers = createClient(TestHelperService, createTransport(fakeRoutes({ calls: 0 })));
    expect((await errorOf(helpers.simulateBankTransfer({}))).code).toBe(Code.Unimplemented);
  });
});

describe('in-process only', () => {
  it('does not call the implementation when the caller\'s signal is already aborted', async () => {
    const seen: Seen = { calls: 0 };
    const client = createClient(OrderService, createInProcessTransport(fakeRoutes(seen)));
    const err = await errorOf(client.getOrder({ id: 'ord_1' }, { signal: AbortSignal.abort() }));
    expect(err.code).toBe(Code.Canceled);
    expect(seen.calls).toBe(0);
  });

  it('hands the caller\'s context values to the implementation (connect\'s router transport drops them)', async () => {
    const seen: Seen = { calls: 0 };
    const client = createClient(OrderService, createInProcessTransport(fakeRoutes(seen)));
    await client.getOrder({ id: 'ord_1' }, { contextValues: createContextValues().set(TENANT, 'shop-a') });
    expect(seen.context?.values.get(TENANT)).toBe('shop-a');
  });

  it('ends the implementation\'s signal when the call is over, so nothing waits on it', async () => {
    const seen: Seen = { calls: 0 };
    const client = createClient(OrderService, createInProcessTransport(fakeRoutes(seen)));
    await client.getOrder({ id: 'ord_1' }, { timeoutMs: 60_000 });
    expect(seen.context?.signal.aborted).toBe(true);
  });

  it('refuses streaming calls with Code.Unimplemented', async () => {
    const events = createClient(EventService, createInProcessTransport(fakeRoutes({ calls: 0 })));
    const stream = events.listenEvents({});
    const err = await errorOf((async () => {
      for await (const _ of stream) break;
    })());
    expect(err.code).toBe(Code.Unimplemented);
  });
});
