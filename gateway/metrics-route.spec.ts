import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { bearsToken, fromLoopback } from './metrics-route.ts';

const request = (remoteAddress: string, headers: Record<string, string> = {}) => ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

describe('who may read /metrics', () => {
  it('a loopback peer that relays nobody', () => {
    expect(fromLoopback(request('127.0.0.1'))).toBe(true);
    expect(fromLoopback(request('::1'))).toBe(true);
    expect(fromLoopback(request('::ffff:127.0.0.5'))).toBe(true);
    expect(fromLoopback(request('10.0.0.7'))).toBe(false);
  });

  it.each(['forwarded', 'x-forwarded-for', 'x-real-ip', 'x-original-forwarded-for', 'true-client-ip', 'cf-connecting-ip', 'x-client-ip', 'fastly-client-ip', 'x-cluster-client-ip', 'via'])(
    'not a loopback peer that carries %s (a local proxy relaying someone)',
    (header) => {
      expect(fromLoopback(request('127.0.0.1', { [header]: '203.0.113.9' }))).toBe(false);
    },
  );

  it('the bearer token, in any case of the scheme, compared whole', () => {
    expect(bearsToken(request('10.0.0.7', { authorization: 'Bearer s3cret-token' }), 's3cret-token')).toBe(true);
    expect(bearsToken(request('10.0.0.7', { authorization: 'bearer s3cret-token' }), 's3cret-token')).toBe(true);
    expect(bearsToken(request('10.0.0.7', { authorization: 'Bearer s3cret-toke' }), 's3cret-token')).toBe(false);
    expect(bearsToken(request('10.0.0.7', { authorization: 'Basic s3cret-token' }), 's3cret-token')).toBe(false);
    expect(bearsToken(request('10.0.0.7', {}), 's3cret-token')).toBe(false);
  });
});
