import { create } from '@bufbuild/protobuf';
import type { ConnectRouter } from '@connectrpc/connect';
import { Code, ConnectError } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CheckoutService, PaymentOutcomeSchema, PaymentStatus } from '../../src/gen/checkout/v1/checkout_pb.ts';
import { buildGateway } from '../app.ts';
import { CONTENT_SECURITY_POLICY } from './security-headers.ts';
import type { SimulatedIssuer } from './simulated-issuer-page.ts';

const redirects: { checkoutId: string; attemptId: string; params: Record<string, string> }[] = [];

function stubRoutes(router: ConnectRouter): void {
  router.service(CheckoutService, {
    completeRedirect: (request) => {
      redirects.push({ checkoutId: request.checkoutId, attemptId: request.attemptId, params: { ...request.params } });
      if (request.attemptId === 'att_gone') throw new ConnectError('No such payment attempt for this checkout.', Code.NotFound);
      if (request.attemptId === 'att_expired') throw new ConnectError('This checkout has expired.', Code.FailedPrecondition);
      return { outcome: create(PaymentOutcomeSchema, { status: PaymentStatus.SUCCEEDED }) };
    },
  });
}

/** An issuer that knows one signed link: ref alpha_1 with sig "good". */
const fieldsLeg = (origin: string) => `http://pay.test/c/abc/return/att_1?fields_origin=${encodeURIComponent(origin)}`;
const issuer: SimulatedIssuer = {
  page: (ref, query) => {
    if (ref === 'alpha_1' && query.sig === 'good') return { processorRef: ref, testCode: '123456' };
    // Links of the embedded fields: the return leg (signed with the link) names the merchant's origin.
    if (ref === 'alpha_2' && query.sig === 'good') return { processorRef: ref, testCode: '123456', returnUrl: fieldsLeg('https://shop.example') };
    if (ref === 'alpha_3' && query.sig === 'good') return { processorRef: ref, testCode: '123456', returnUrl: fieldsLeg('https://*') };
    return undefined;
  },
  answer: (ref, query, code) => (ref === 'alpha_1' && query.sig === 'good' ? `http://pay.test/c/abc/return/att_1?result=${code === '123456' ? 'passed' : 'failed'}&evil=%3Cscript%3E` : undefined),
};

let app: FastifyInstance;

beforeAll(async () => {
  app = await buildGateway({ routes: stubRoutes, publicUrl: 'http://localhost', simulatedIssuer: issuer });
  await app.ready();
});

afterAll(async () => {
  await app?.close();
});

describe('the simulated issuer page', () => {
  it('shows a signed challenge link with the test code in the customer\'s language, the test-mode banner and the pages\' CSP', async () => {
    const res = await app.inject({ url: '/simulator/issuer/alpha_1?return_url=x&sig=good', headers: { 'accept-language': 'de' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(res.body).toContain('Testmodus: Geben Sie 123456 ein');
    expect(res.body).toContain('class="test-mode"');
    // The form posts back to the same signed link, escaped.
    expect(res.body).toContain('action="/simulator/issuer/alpha_1?return_url=x&amp;sig=good"');
  });

  it('is framed by the merchant origin its signed return leg names (the embedded fields), else by nobody', async () => {
    const fields = await app.inject({ url: '/simulator/issuer/alpha_2?sig=good' });
    expect(fields.statusCode).toBe(200);
    expect(fields.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY.replace("frame-ancestors 'none'", 'frame-ancestors https://shop.example'));
    expect(fields.headers['x-frame-options']).toBeUndefined();
    // An origin the fields may not be embedded in (a wildcard would let any site frame it): not framed at all.
    const wild = await app.inject({ url: '/simulator/issuer/alpha_3?sig=good' });
    expect(wild.headers['content-security-policy']).toBe(CONTENT_SECURITY_POLICY);
    expect(wild.headers['x-frame-options']).toBe('DENY');
    expect((await app.inject({ url: '/simulator/issuer/alpha_1?return_url=x&sig=good' })).headers['x-frame-options']).toBe('DENY');
  });

  it('answers a forged or altered link with 404 and sends nobody anywhere', async () => {
    expect((await app.inject({ url: '/simulator/issuer/alpha_1?return_url=http://evil.example&sig=bad' })).statusCode).toBe(404);
    const post = await app.inject({ method: 'POST', url: '/simulator/issuer/alpha_1?sig=bad', payload: 'code=123456', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(post.statusCode).toBe(404);
    expect(post.headers.location).toBeUndefined();
  });

  it('sends the answer (303) to the return leg the simulator signed; Cancel fails the check', async () => {
    const passed = await app.inject({ method: 'POST', url: '/simulator/issuer/alpha_1?sig=good', payload: 'code=123456', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(passed.statusCode).toBe(303);
    expect(passed.headers.location).toContain('result=passed');
    const canceled = await app.inject({ method: 'POST', url: '/simulator/issuer/alpha_1?sig=good', payload: 'code=123456&cancel=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(canceled.headers.location).toContain('result=failed');
  });

  it('is not served without a simulated issuer', async () => {
    const bare = await buildGateway({ routes: stubRoutes, publicUrl: 'http://localhost' });
    try {
      expect((await bare.inject({ url: '/simulator/issuer/alpha_1?sig=good' })).statusCode).toBe(404);
    } finally {
      await bare.close();
    }
  });
});

describe('the return leg /c/:checkout/return/:attempt', () => {
  it('completes the redirect with the query (GET) and shows the checkout page (303)', async () => {
    redirects.length = 0;
    const res = await app.inject({ url: '/c/abc/return/att_1?ref=alpha_1&result=passed&sig=s' });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/c/abc');
    expect(redirects).toEqual([{ checkoutId: 'abc', attemptId: 'att_1', params: { ref: 'alpha_1', result: 'passed', sig: 's' } }]);
  });

  it('completes it with the form fields (POST), as a processor posting back does', async () => {
    redirects.length = 0;
    const res = await app.inject({ method: 'POST', url: '/c/abc/return/att_1', payload: 'redirectResult=X%2BY&MD=1', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(res.statusCode).toBe(303);
    expect(redirects[0]!.params).toEqual({ redirectResult: 'X+Y', MD: '1' });
  });

  it("ends a fields payment's return leg on their frame page for that origin, and keeps our parameter from the processor", async () => {
    redirects.length = 0;
    const res = await app.inject({ url: `/c/abc/return/att_1?ref=alpha_1&result=passed&sig=s&fields_origin=${encodeURIComponent('https://shop.example')}` });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe(`/fields/returned?origin=${encodeURIComponent('https://shop.example')}`);
    expect(redirects).toEqual([{ checkoutId: 'abc', attemptId: 'att_1', params: { ref: 'alpha_1', result: 'passed', sig: 's' } }]);
    // Refused or unknown, the overlay still ends there (the fields read the result); an origin they may not be embedded in is the hosted page's.
    expect((await app.inject({ url: `/c/abc/return/att_gone?fields_origin=${encodeURIComponent('https://shop.example')}` })).headers.location).toBe(`/fields/returned?origin=${encodeURIComponent('https://shop.example')}`);
    expect((await app.inject({ url: `/c/abc/return/att_1?fields_origin=${encodeURIComponent('https://*')}` })).headers.location).toBe('/c/abc');
  });

  it('shows the checkout page when the order refused it (expired), and 404 for an unknown attempt', async () => {
    expect((await app.inject({ url: '/c/abc/return/att_expired?x=1' })).headers.location).toBe('/c/abc');
    expect((await app.inject({ url: '/c/abc/return/att_gone?x=1' })).statusCode).toBe(404);
    expect((await app.inject({ url: '/c/abc/return/not%20an%20id' })).statusCode).toBe(404);
  });
});
