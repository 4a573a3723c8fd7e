// What a publishable key (pk_…) can do, as docs/api.md ("Authentication") and docs/checkout.md ("Client
// secrets") state it: pay one order through CheckoutService with that order's client secret, and make a
// single-use card token (POST /v1/tokens, CustomerService.CreateCardToken). Every other REST route and
// every other method refuses it with 403 secret_key_required / permission_denied.
import { Code, ConnectError, createClient, createRouterTransport } from '@connectrpc/connect';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { CheckoutService } from '../src/gen/checkout/v1/checkout_pb.ts';
import { CustomerService } from '../src/gen/checkout/v1/customer_pb.ts';
import { OrderService } from '../src/gen/checkout/v1/order_pb.ts';
import { RefundService } from '../src/gen/checkout/v1/refund_pb.ts';
import { orderBody } from './support/order-fixtures.ts';
import { startTestService, type TestService } from './support/service.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Publishable shop');
});
afterAll(async () => {
  await svc?.close();
});

const card = () => ({ number: shop.test_cards.find((c) => c.behaviour === 'approved')!.number, exp_month: 12, exp_year: new Date().getUTCFullYear() + 3, cvc: '123', name: 'Ada Lovelace' });
const connect = <T extends Parameters<typeof createClient>[0]>(service: T) => createClient(service, createRouterTransport(svc.core.routes));
const refusal = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => ConnectError.from(e));

describe('a publishable key', () => {
  it('makes a card token over REST and Connect', async () => {
    const rest = await svc.app.inject({ method: 'POST', url: '/v1/tokens', headers: { authorization: `Bearer ${shop.test_publishable_key}`, 'content-type': 'application/json' }, payload: JSON.stringify({ card: card() }) });
    expect(rest.statusCode, rest.body).toBe(201);
    expect(rest.json().id).toMatch(/^tok_/);
    const c = card();
    const token = await connect(CustomerService).createCardToken({ card: { number: c.number, expMonth: c.exp_month, expYear: c.exp_year, cvc: c.cvc, name: c.name } }, { headers: { authorization: `Bearer ${shop.test_publishable_key}` } });
    expect(token.token?.id ?? '').toMatch(/^tok_/);
  });

  it("reads and pays one order through CheckoutService with that order's client secret, and not without it", async () => {
    const created = await svc.app.inject({ method: 'POST', url: '/v1/orders', headers: { authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' }, payload: JSON.stringify(orderBody()) });
    const { id, client_secret: secret } = created.json() as { id: string; client_secret: string };
    const checkout = connect(CheckoutService);
    const read = await checkout.getCheckout({ checkoutId: id.slice(4) }, { headers: { authorization: `Bearer ${shop.test_publishable_key}`, 'checkout-client-secret': secret } });
    expect(read.checkout?.order?.id).toBe(id);
    const paid = await checkout.submitWalletPayment({ checkoutId: id.slice(4), submissionId: `pk-${id}` }, { headers: { authorization: `Bearer ${shop.test_publishable_key}`, 'checkout-client-secret': secret } });
    expect(paid.outcome?.checkout?.order?.id).toBe(id);
    const without = await refusal(checkout.getCheckout({ checkoutId: id.slice(4) }, { headers: { authorization: `Bearer ${shop.test_publishable_key}` } }));
    expect(without?.code).toBe(Code.Unauthenticated);
  });

  it('is refused with 403 secret_key_required by every other REST route', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const answered: string[] = [];
    for (const [template, operations] of Object.entries(doc.paths)) {
      for (const method of Object.keys(operations)) {
        const route = `${method.toUpperCase()} ${template}`;
        if (route === 'POST /v1/tokens' || route === 'GET /v1/openapi.json') continue;
        const url = template.replace(/\{[^}]+\}/g, 'x_1');
        const body = ['post', 'patch', 'put'].includes(method) ? { headers: { 'content-type': 'application/json' }, payload: '{}' } : { headers: {} };
        const res = await svc.app.inject({ method: method.toUpperCase() as 'GET', url, ...body, headers: { ...body.headers, authorization: `Bearer ${shop.test_publishable_key}` } });
        answered.push(`${route} ${res.statusCode} ${res.json().error?.code}`);
      }
    }
    expect(answered.length).toBeGreaterThan(40);
    expect(answered.filter((a) => !a.endsWith(' 403 secret_key_required'))).toEqual([]);
  });

  it('is refused with permission_denied by the other services over Connect', async () => {
    const headers = { authorization: `Bearer ${shop.test_publishable_key}` };
    for (const refused of [refusal(connect(OrderService).listOrders({}, { headers })), refusal(connect(RefundService).createRefund({ orderId: 'ord_x', reason: 'duplicate' }, { headers })), refusal(connect(CustomerService).listCustomers({}, { headers }))]) {
      expect((await refused)?.code).toBe(Code.PermissionDenied);
    }
  });
});
