import { describe, expect, it } from 'vitest';
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { OrderService } from '../../gen/checkout/v1/order_pb.ts';
import { DomainError } from '../domain/domain-error.ts';
import { ApplicationError } from './application-error.ts';
import { guardRequests } from './request-guard.ts';
import { ERRORS } from '../../composition/modules.ts';

/** A client over a router where getOrder does what the test says; every call goes through the guard. */
function clientThat(getOrder: () => never, logged: Array<{ err: unknown; requestId: string }>) {
  const impl = { getOrder, createOrder: getOrder, listOrders: getOrder, voidOrder: getOrder, captureOrder: getOrder, expireOrder: getOrder };
  const transport = createRouterTransport((router) => router.service(OrderService, guardRequests(OrderService, impl, (err, requestId) => logged.push({ err, requestId }), () => 'req_made_by_the_guard', undefined, undefined, ERRORS)));
  return createClient(OrderService, transport);
}

describe('the request guard', () => {
  it('turns an unknown fault into internal_error, logged once with the request id, revealing nothing', async () => {
    const logged: Array<{ err: unknown; requestId: string }> = [];
    const boom = new Error('secret detail of a bug');
    const client = clientThat(() => {
      throw boom;
    }, logged);
    const err = await client.getOrder({ id: 'ord_x' }).then(() => { throw new Error('expected a failure'); }, (e: unknown) => ConnectError.from(e));
    expect(err.code).toBe(Code.Internal);
    expect(err.rawMessage).not.toContain('secret detail');
    expect(logged).toEqual([{ err: boom, requestId: 'req_made_by_the_guard' }]);
  });

  it('uses the request id the gateway forwards, and maps domain and application errors without logging them', async () => {
    const logged: Array<{ err: unknown; requestId: string }> = [];
    let throwing: Error = new DomainError('checkout.expired', 'expired');
    const client = clientThat(() => {
      throw throwing;
    }, logged);
    expect((await client.getOrder({ id: 'ord_x' }).then(() => { throw new Error('expected a failure'); }, (e: unknown) => ConnectError.from(e))).code).toBe(Code.FailedPrecondition);
    throwing = new ApplicationError('order.not_found', 'No such order');
    expect((await client.getOrder({ id: 'ord_x' }).then(() => { throw new Error('expected a failure'); }, (e: unknown) => ConnectError.from(e))).code).toBe(Code.NotFound);
    throwing = new Error('bug');
    await client.getOrder({ id: 'ord_x' }, { headers: { 'request-id': 'req_from_the_gateway' } }).catch(() => undefined);
    expect(logged.map((l) => l.requestId)).toEqual(['req_from_the_gateway']);
  });
});
