import { describe, expect, test } from 'vitest';
import { DomainError } from '../../../kernel/domain/domain-error.ts';
import { parseEnabledEvents, parseEndpointUrl, subscribes, WEBHOOK_EVENT_TYPES } from './webhook-endpoint.entity.ts';

/** The address policy is an adapter's knowledge; a stand-in that refuses a few hosts is enough here. */
const REFUSED_HOSTS = new Set(['127.0.0.1', '10.0.0.1', '169.254.169.254', '[::1]', '[::ffff:a00:1]', 'localhost']);
const isForbidden = (host: string) => (REFUSED_HOSTS.has(host) ? `${host} is refused by the stand-in` : undefined);

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
  test('any http(s) URL the policy allows; answers the normalised URL', () => {
    expect(parseEndpointUrl('http://192.0.2.10:4000/webhooks', false, isForbidden)).toBe('http://192.0.2.10:4000/webhooks');
    expect(parseEndpointUrl('http://shop.example:4000/hooks', false, isForbidden)).toBe('http://shop.example:4000/hooks');
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

  test('both modes: a host the policy refuses is url_forbidden, with its reason and the way to receive events locally', () => {
    for (const livemode of [false, true]) {
      for (const raw of ['https://127.0.0.1/x', 'https://10.0.0.1:8443/x', 'https://169.254.169.254/latest/meta-data/', 'https://[::1]/x', 'https://[::ffff:10.0.0.1]/x', 'https://LOCALHOST:443/x']) {
        expect(codeOf(() => parseEndpointUrl(raw, livemode, isForbidden)), `${livemode} ${raw}`).toBe('webhook.url_forbidden@url');
      }
    }
    expect(() => parseEndpointUrl('http://127.0.0.1:4000/webhooks', false, isForbidden)).toThrow(/\(127\.0\.0\.1 is refused by the stand-in\)\. To receive test events on your own machine, run `checkout listen/);
    // The policy is asked about the URL's normalised host: lower case, IPv6 in brackets, without the port.
    const asked: string[] = [];
    parseEndpointUrl('https://[2001:DB8::1]:8443/x', true, (host) => void asked.push(host));
    parseEndpointUrl('https://Shop.Example/x', false, (host) => void asked.push(host));
    expect(asked).toEqual(['[2001:db8::1]', 'shop.example']);
  });
});
