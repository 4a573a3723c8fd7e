// The fields' routes on a bare Fastify (app.inject): frame pages frameable by the announced origin only, the
// library loadable from any origin, the checked-in scripts what the build makes, and the first load's weight.
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bundleFields } from '../../scripts/fields-bundle.ts';
import { CONTENT_SECURITY_POLICY } from '../checkout/security-headers.ts';
import { registerFieldsRoutes } from './fields-routes.ts';
import { measureFieldsFirstLoad } from './fields-size.ts';

async function app() {
  const a = Fastify();
  registerFieldsRoutes(a);
  await a.ready();
  return a;
}

describe('the field frames', () => {
  it('name exactly the announced origin in frame-ancestors, with our own script and style only', async () => {
    const a = await app();
    for (const page of ['card-number', 'card-expiry', 'card-cvc', 'returned']) {
      const res = await a.inject({ url: `/fields/${page}?origin=${encodeURIComponent('https://shop.example')}` });
      expect(res.statusCode, page).toBe(200);
      const csp = res.headers['content-security-policy'] as string;
      expect(csp).toContain('frame-ancestors https://shop.example;');
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("default-src 'none'");
      expect(csp).not.toContain('unsafe');
      expect(res.headers['x-frame-options']).toBeUndefined();
      expect(res.body).not.toMatch(/<script>|style=/);
      const asset = /<script src="([^"]+)"/.exec(res.body)![1]!;
      const script = await a.inject({ url: asset, headers: { 'accept-encoding': 'gzip' } });
      expect(script.statusCode).toBe(200);
      expect(script.headers['content-encoding']).toBe('gzip');
      expect(script.headers['cache-control']).toContain('immutable');
    }
  });

  it.each([
    ['no origin', ''],
    ['plain http on a public host', '?origin=http%3A%2F%2Fshop.example'],
    ['a CSP injection', `?origin=${encodeURIComponent("https://shop.example 'unsafe-inline'")}`],
    ['a wildcard', '?origin=*'],
    ['two origins', '?origin=https%3A%2F%2Fa.example&origin=https%3A%2F%2Fb.example'],
  ])('refuse %s, and cannot be framed then', async (_name, query) => {
    const a = await app();
    const res = await a.inject({ url: `/fields/card-number${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers['x-frame-options']).toBe('DENY');
  });

  it('answer 404 for another page', async () => {
    const a = await app();
    expect((await a.inject({ url: '/fields/card-pin?origin=https%3A%2F%2Fshop.example' })).statusCode).toBe(404);
    expect((await a.inject({ url: '/fields/assets/frame-000000000000.js' })).statusCode).toBe(404);
  });
});

describe('the library', () => {
  it('is served to any origin as a script', async () => {
    const a = await app();
    const res = await a.inject({ url: '/js/fields.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.body).toContain('CheckoutFields');
  });

  it('keeps the hosted checkout unframeable', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
  });
});

describe('the built scripts', () => {
  it('are what `npm run build:fields` makes of sdk/fields (run it and commit when this fails)', async () => {
    const built = await bundleFields();
    for (const [name, code] of Object.entries(built)) {
      expect(readFileSync(new URL(`../../sdk/fields/dist/${name}`, import.meta.url), 'utf8'), name).toBe(code);
    }
  });

  it('weigh under 15 KB compressed at first load (library, three frames, their script and stylesheet)', () => {
    const sizes = measureFieldsFirstLoad();
    expect(sizes.gzip.total).toBeLessThan(15 * 1024);
    expect(sizes.br.total).toBeLessThan(15 * 1024);
  });
});
