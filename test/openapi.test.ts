import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startTestService, type TestService } from './support/service.ts';
import { orderBody } from './support/order-fixtures.ts';

interface Operation {
  operationId: string;
  parameters?: { name: string; in: string }[];
  requestBody?: unknown;
  responses: Record<string, { headers?: Record<string, unknown>; content?: unknown }>;
}
interface Document {
  openapi: string;
  info: { version: string };
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { required?: string[]; properties: Record<string, unknown> }> };
}

let svc: TestService;
let doc: Document;
beforeAll(async () => {
  svc = await startTestService();
  const res = await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(async () => {
  await svc?.close();
});

const operations = () => Object.entries(doc.paths).flatMap(([path, ops]) => Object.entries(ops).map(([method, op]) => ({ method, path, op })));

describe('OpenAPI document', () => {
  it('is served at /v1/openapi.json and is valid OpenAPI 3.1', async () => {
    expect(doc).toMatchObject({ openapi: '3.1.0', info: { version: 'v1' } });
    const result = await new Validator().validate(doc as never);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('describes exactly the /v1 routes the gateway serves, method by method', () => {
    const documented = operations().map(({ method, path }) => `${method} ${path}`);
    expect(svc.app.restRoutes.length).toBeGreaterThanOrEqual(16);
    expect(documented.sort()).toEqual([...svc.app.restRoutes].sort());
  });

  it('names every operation once, and offers Idempotency-Key on every call that changes state', () => {
    const ids = operations().map(({ op }) => op.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    const changing = operations().filter(({ method }) => method !== 'get');
    expect(changing.length).toBeGreaterThanOrEqual(8);
    for (const { method, path, op } of changing) {
      expect({ method, path, key: op.parameters?.some((p) => p.in === 'header' && p.name.toLowerCase() === 'idempotency-key') }).toEqual({ method, path, key: true });
    }
  });

  it('carries Request-Id on every answer, and the error body on every error answer', () => {
    for (const { method, path, op } of operations()) {
      for (const [status, response] of Object.entries(op.responses)) {
        expect({ method, path, status, requestId: response.headers?.['Request-Id'] !== undefined }).toEqual({ method, path, status, requestId: true });
        if (Number(status) >= 400) expect(JSON.stringify(response.content)).toContain('#/components/schemas/Error');
      }
    }
  });

  it('lists exactly the fields a created order has', async () => {
    const res = await svc.app.inject({
      method: 'POST',
      url: '/v1/orders',
      headers: { authorization: `Bearer ${(await svc.sandbox('OpenAPI shop')).test_secret_key}`, 'content-type': 'application/json' },
      payload: JSON.stringify(orderBody()),
    });
    expect(res.statusCode).toBe(201);
    const order = doc.components.schemas.Order!;
    const created = doc.components.schemas.CreatedOrder!;
    // The create's answer is the order plus, once, its client secret (never part of the Order object).
    expect(Object.keys(res.json()).sort()).toEqual(Object.keys(created.properties).sort());
    expect(Object.keys(created.properties).sort()).toEqual([...Object.keys(order.properties), 'client_secret'].sort());
    expect([...(order.required ?? [])].sort()).toEqual(Object.keys(order.properties).sort());
    expect([...(created.required ?? [])].sort()).toEqual(Object.keys(order.properties).sort());
  });

  it('lists null in every enum whose type admits null (else a null the API sends matches the type but not the enum)', () => {
    const wrong: string[] = [];
    const walk = (node: unknown, at: string): void => {
      if (Array.isArray(node)) return node.forEach((item, i) => walk(item, `${at}[${i}]`));
      if (typeof node !== 'object' || node === null) return;
      const { type, enum: values } = node as { type?: unknown; enum?: unknown[] };
      if (Array.isArray(type) && type.includes('null') && values && !values.includes(null)) wrong.push(at);
      for (const [k, v] of Object.entries(node)) walk(v, `${at}/${k}`);
    };
    walk(doc, '#');
    expect(wrong).toEqual([]);
  });
});
