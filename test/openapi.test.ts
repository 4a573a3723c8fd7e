import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './support/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.close();
});

describe('OpenAPI document', () => {
  it('is served at /v1/openapi.json as OpenAPI 3.1', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ openapi: '3.1.0', info: { version: 'v1' } });
  });

  it('describes exactly the /v1 routes the gateway serves, method by method', async () => {
    const doc = (await svc.app.inject({ method: 'GET', url: '/v1/openapi.json' })).json() as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`));
    expect(svc.app.restRoutes.length).toBeGreaterThanOrEqual(4);
    expect(documented.sort()).toEqual([...svc.app.restRoutes].sort());
  });
});
