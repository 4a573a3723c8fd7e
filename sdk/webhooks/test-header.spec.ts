import { describe, expect, it } from 'vitest';
import { generateTestHeader } from './test-header.ts';
import { verifyWebhook } from './verify.ts';
import { WebhookVerificationError } from './webhook-verification-error.ts';

const SECRET = 'whsec_testHeaderSecret0000000000000000';
const payload = JSON.stringify({
  id: 'evt_test_1',
  type: 'order.created',
  created: new Date().toISOString(),
  livemode: false,
  sequence: 1,
  data: { id: 'ord_1', reference: 'R-1' },
});

describe('generateTestHeader', () => {
  it('makes a header verifyWebhook accepts (round trip), signed now by default', () => {
    const header = generateTestHeader({ payload, secret: SECRET });
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhook(payload, header, SECRET).id).toBe('evt_test_1');
    expect(verifyWebhook(Buffer.from(payload), generateTestHeader({ payload: Buffer.from(payload), secret: SECRET }), SECRET).type).toBe('order.created');
  });

  it('signs with the given timestamp', () => {
    const timestamp = 1_700_000_000;
    const header = generateTestHeader({ payload, secret: SECRET, timestamp });
    expect(header.startsWith(`t=${timestamp},v1=`)).toBe(true);
    expect(verifyWebhook(payload, header, SECRET, { now: () => (timestamp + 60) * 1000 }).id).toBe('evt_test_1');
    expect(() => verifyWebhook(payload, header, SECRET)).toThrow(WebhookVerificationError);
  });

  it('signs with several secrets like a rotation overlap, each verifying alone', () => {
    const other = 'whsec_otherSecret000000000000000000000';
    const header = generateTestHeader({ payload, secret: [other, SECRET] });
    expect(header.split(',')).toHaveLength(3);
    expect(verifyWebhook(payload, header, SECRET).id).toBe('evt_test_1');
    expect(verifyWebhook(payload, header, other).id).toBe('evt_test_1');
  });

  it('refuses a parsed payload, a non-whsec_ secret and a fractional timestamp', () => {
    expect(() => generateTestHeader({ payload: JSON.parse(payload) as never, secret: SECRET })).toThrow(/exact body/);
    expect(() => generateTestHeader({ payload, secret: 'sk_test_x' })).toThrow(/whsec_/);
    expect(() => generateTestHeader({ payload, secret: [] })).toThrow(/whsec_/);
    expect(() => generateTestHeader({ payload, secret: SECRET, timestamp: 1_700_000_000.5 })).toThrow(/Unix seconds/);
  });
});
