import { describe, expect, test } from 'vitest';
import { DomainError } from '../shared/domain-error.ts';
import { parseEnabledEvents, parseEndpointUrl, subscribes, WEBHOOK_EVENT_TYPES } from './webhook-endpoint.entity.ts';

/** The address policy is an adapter's knowledge; a stand-in that knows a few literals is enough here. */
const FORBIDDEN_LITERALS = new Set(['127.0.0.1', '10.0.0.1', '169.254.169.254', '::1', '::ffff:a00:1']);
const isForbidden = (host: string) => FORBIDDEN_LITERALS.has(host);

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    if (err instanceof DomainError) return `${err.code}${err.param ? `@${err.param}` : ''}`;
    throw err;
  }
  return 'ok';
}

describe('parseEnabledEvents', () => {
  test('known types are kept once each, in the given order', () => {
    expect(parseEnabledEvents(['order.paid'])).toEqual(['order.paid']);
    expect(parseEnabledEvents(['order.paid', 'order.failed', 'order.paid'])).toEqual(['order.paid', 'order.failed']);
    expect(parseEnabledEvents([...WEBHOOK_EVENT_TYPES])).toEqual([...WEBHOOK_EVENT_TYPES]);
  });

  test('"*" means all, alone (repeated is fine)', () => {
    expect(parseEnabledEvents(['*'])).toEqual(['*']);
    expect(parseEnabledEvents(['*', '*'])).toEqual(['*']);
    expect(codeOf(() => parseEnabledEvents(['*', 'order.paid']))).toBe('webhook.events_invalid@enabled_events');
  });

  test('an empty list, an unknown type or a near miss is refused', () => {
    for (const events of [[], ['order.shipped'], ['Order.Paid'], ['order.paid '], ['order.*'], ['']]) {
      expect(codeOf(() => parseEnabledEvents(events)), JSON.stringify(events)).toBe('webhook.events_invalid@enabled_events');
    }
  });

  test('the reserved types can be subscribed to already', () => {
    expect(parseEnabledEvents(['order.refunded', 'payout.settled', 'subscription.charged', 'order.disputed'])).toHaveLength(4);
  });
});

describe('subscribes', () => {
  test('"*" takes every type; a list takes its members only', () => {
    expect(subscribes({ enabledEvents: ['*'] }, 'order.created')).toBe(true);
    expect(subscribes({ enabledEvents: ['*'] }, 'payout.settled')).toBe(true);
    expect(subscribes({ enabledEvents: ['order.paid'] }, 'order.paid')).toBe(true);
    expect(subscribes({ enabledEvents: ['order.paid'] }, 'order.created')).toBe(false);
    expect(subscribes({ enabledEvents: ['order.paid', 'order.failed'] }, 'order.failed')).toBe(true);
    expect(subscribes({ enabledEvents: [] }, 'order.paid')).toBe(false);
  });
});

describe('parseEndpointUrl', () => {
  test('test mode: any http(s) URL, local ones included; answers the normalised URL', () => {
    expect(parseEndpointUrl('http://127.0.0.1:4000/webhooks', false, isForbidden)).toBe('http://127.0.0.1:4000/webhooks');
    expect(parseEndpointUrl('http://localhost:4000/hooks', false, isForbidden)).toBe('http://localhost:4000/hooks');
    expect(parseEndpointUrl('HTTPS://Shop.Example', false, isForbidden)).toBe('https://shop.example/');
  });

  test('not an absolute http(s) URL, too long, or with credentials: url_invalid, in both modes', () => {
    for (const livemode of [false, true]) {
      for (const raw of ['', 'shop.example/webhooks', '/webhooks', 'ftp://shop.example/x', 'javascript:alert(1)', 'https://user:pw@shop.example/x', 'https://user@shop.example/x', `https://shop.example/${'a'.repeat(2040)}`]) {
        expect(codeOf(() => parseEndpointUrl(raw, livemode, isForbidden)), `${livemode} ${raw.slice(0, 40)}`).toBe('webhook.url_invalid@url');
      }
    }
    expect(codeOf(() => parseEndpointUrl(`https://shop.example/${'a'.repeat(2048 - 'https://shop.example/'.length)}`, true, isForbidden))).toBe('ok');
  });

  test('live mode: https only', () => {
    expect(parseEndpointUrl('https://shop.example/webhooks', true, isForbidden)).toBe('https://shop.example/webhooks');
    expect(codeOf(() => parseEndpointUrl('http://shop.example/webhooks', true, isForbidden))).toBe('webhook.url_invalid@url');
  });

  test('live mode: local names and forbidden literal addresses (bracketed IPv6 too) are url_forbidden', () => {
    for (const raw of [
      'https://127.0.0.1/x',
      'https://10.0.0.1:8443/x',
      'https://169.254.169.254/latest/meta-data/',
      'https://[::1]/x',
      'https://[::ffff:10.0.0.1]/x',
      'https://localhost/x',
      'https://LOCALHOST:443/x',
      'https://api.localhost/x',
      'https://printer.local/x',
      'https://db.internal/x',
      'https://metadata.google.internal/computeMetadata/v1/',
    ]) {
      expect(codeOf(() => parseEndpointUrl(raw, true, isForbidden)), raw).toBe('webhook.url_forbidden@url');
    }
    // The policy is asked about the bare host, without brackets or port.
    const asked: string[] = [];
    parseEndpointUrl('https://[2001:db8::1]:8443/x', true, (host) => (asked.push(host), false));
    expect(asked).toEqual(['2001:db8::1']);
  });
});
