// A parameter that takes one of a closed list of values (a refund's reason, a link's type, a
// subscription's interval, …): when it is missing, null, of the wrong type or another value, the
// error says which values it takes, so the caller's next request can be right.
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxCredentials } from '../src/modules/merchant/application/create-sandbox.ts';
import { DISPUTE_REASONS } from '../src/modules/dispute/domain/dispute.entity.ts';
import { REFUND_REASONS } from '../src/modules/refund/domain/refund.entity.ts';
import { INTERVALS } from '../src/modules/subscription/domain/schedule.ts';
import { PaymentStatus } from '../src/gen/checkout/v1/checkout_pb.ts';
import { ALLOWED_NOTE } from '../gateway/rest/shared/schemas.ts';
import { schemaErrors, toParamError } from '../gateway/rest/shared/validation.ts';
import { orderBody } from './support/order-fixtures.ts';
import { payWithTestCard } from './support/payments.ts';
import { startTestService, type TestService } from './support/service.ts';

let svc: TestService;
let shop: SandboxCredentials;

beforeAll(async () => {
  svc = await startTestService();
  shop = await svc.sandbox('Allowed values shop');
});
afterAll(async () => {
  await svc?.close();
});

const headers = () => ({ authorization: `Bearer ${shop.test_secret_key}`, 'content-type': 'application/json' });
const post = (url: string, body: unknown) => svc.app.inject({ method: 'POST', url, headers: headers(), payload: JSON.stringify(body) });

async function paidOrder(): Promise<string> {
  const created = await post('/v1/orders', orderBody());
  expect(created.statusCode, created.body).toBe(201);
  const id = created.json().id as string;
  expect((await payWithTestCard(svc.core.routes, shop, id)).outcome?.status).toBe(PaymentStatus.SUCCEEDED);
  return id;
}

/** Expects a 400 about `param` whose message names every value of `values`. */
function expectListed(res: { statusCode: number; body: string; json(): { error: { code: string; param?: string; message: string } } }, code: string, param: string, values: readonly string[]): void {
  expect(res.statusCode, res.body).toBe(400);
  const { error } = res.json();
  expect(error).toMatchObject({ code, param });
  for (const value of values) expect(error.message).toContain(value);
}

describe('a refund', () => {
  it('without reason, or with reason null, names the reasons it takes', async () => {
    const id = await paidOrder();
    const missing = await post(`/v1/orders/${id}/refunds`, { amount: 100 });
    expectListed(missing, 'parameter_missing', 'reason', REFUND_REASONS);
    expect(missing.json().error.message).toBe('Missing required parameter: reason. It must be one of requested_by_customer, duplicate, fraudulent, product_not_received, other.');
    expectListed(await post(`/v1/orders/${id}/refunds`, { reason: null }), 'parameter_missing', 'reason', REFUND_REASONS);
    expectListed(await post(`/v1/orders/${id}/refunds`, { reason: 7 }), 'parameter_invalid_string', 'reason', REFUND_REASONS);
    expectListed(await post(`/v1/orders/${id}/refunds`, { reason: 'changed_mind' }), 'reason_invalid', 'reason', REFUND_REASONS);
    // Nothing was refunded by any of them.
    expect((await svc.app.inject({ method: 'GET', url: `/v1/orders/${id}`, headers: headers() })).json()).toMatchObject({ status: 'paid', amount_refunded: 0 });
  });
});

describe('other parameters from a closed list', () => {
  it("a test dispute's reason, a subscription's interval, a link's type and an order's capture_method", async () => {
    const id = await paidOrder();
    expectListed(await post(`/v1/test_helpers/orders/${id}/dispute`, {}), 'parameter_missing', 'reason', DISPUTE_REASONS);
    const subscription = { customer: 'cus_none', card: 'card_none', amount: 100, currency: 'EUR', reference: 'sub-1' };
    expectListed(await post('/v1/subscriptions', subscription), 'parameter_missing', 'interval', INTERVALS);
    const link = { amount: 100, currency: 'EUR', reference: 'link-1' };
    expectListed(await post('/v1/links', link), 'parameter_missing', 'type', ['single_use', 'collecting']);
    expectListed(await post('/v1/links', { ...link, type: 'reusable' }), 'parameter_invalid', 'type', ['single_use', 'collecting']);
    expectListed(await post('/v1/orders', orderBody({ capture_method: 'later' })), 'parameter_invalid', 'capture_method', ['automatic', 'manual']);
  });
});

type Schema = Record<string, unknown> & { properties?: Record<string, Schema>; required?: string[]; enum?: unknown[] };

/** Every route schema (an object with a body or querystring) that gateway/rest/<resource>/schemas.ts exports. */
async function routeSchemas(): Promise<{ name: string; part: 'body' | 'querystring'; schema: Schema }[]> {
  const rest = fileURLToPath(new URL('../gateway/rest/', import.meta.url));
  const found: { name: string; part: 'body' | 'querystring'; schema: Schema }[] = [];
  for (const dir of readdirSync(rest, { withFileTypes: true })) {
    if (!dir.isDirectory() || !readdirSync(`${rest}${dir.name}`).includes('schemas.ts')) continue;
    const module = (await import(`${rest}${dir.name}/schemas.ts`)) as Record<string, unknown>;
    for (const [name, value] of Object.entries(module)) {
      if (typeof value !== 'object' || value === null) continue;
      for (const part of ['body', 'querystring'] as const) {
        const schema = (value as Record<string, unknown>)[part] as Schema | undefined;
        if (schema?.properties) found.push({ name: `${dir.name}/${name}`, part, schema });
      }
    }
  }
  return found;
}

describe('every request parameter with an enum', () => {
  it('is told with its values when it is missing, null or of another type', async () => {
    const schemas = await routeSchemas();
    expect(schemas.length).toBeGreaterThan(20);
    const checked: string[] = [];
    for (const { name, part, schema } of schemas) {
      for (const [param, property] of Object.entries(schema.properties!)) {
        const values = (property.enum ?? property[ALLOWED_NOTE]) as string[] | undefined;
        if (!values) continue;
        checked.push(`${name}.${param}`);
        const bodies: unknown[] = [{ [param]: 12 }];
        if (schema.required?.includes(param)) bodies.push({}, { [param]: null });
        for (const body of bodies) {
          // Only this parameter's errors: the others' come first in a real request of this body.
          const errors = schemaErrors(schema, body).filter((e) => e.instancePath === `/${param}` || e.params.missingProperty === param);
          expect(errors.length, `${name}.${param} ${JSON.stringify(body)}`).toBeGreaterThan(0);
          const told = toParamError(errors, part, body, schema);
          for (const value of values) expect(told.message, `${name}.${param} ${JSON.stringify(body)}`).toContain(value);
        }
      }
    }
    expect(checked).toEqual(expect.arrayContaining(['refunds/createRefundSchema.reason', 'orders/createOrderSchema.capture_method', 'payment-links/createPaymentLinkSchema.type', 'subscriptions/createSubscriptionSchema.interval']));
  });
});
