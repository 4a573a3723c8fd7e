import { describe, expect, it } from 'vitest';
import { assertWithinVelocity, velocityAddress, velocityScore, type VelocityLimits } from './velocity.ts';

const limits: VelocityLimits = { windowMs: 600_000, perClientAddress: 10, perMerchant: 100, declineWeight: 4 };
const tally = (attempts: number, declines: number) => ({ attempts, declines });

describe('velocity limits', () => {
  it('scores a submission 1 and a declined one declineWeight', () => {
    expect(velocityScore(tally(0, 0), 4)).toBe(0);
    expect(velocityScore(tally(3, 0), 4)).toBe(3);
    expect(velocityScore(tally(3, 2), 4)).toBe(9);
  });

  it('allows a submission while it keeps the score within the limit, and refuses the one past it', () => {
    expect(() => assertWithinVelocity(limits, { clientAddress: tally(9, 0), merchant: tally(0, 0) })).not.toThrow();
    expect(() => assertWithinVelocity(limits, { clientAddress: tally(10, 0), merchant: tally(0, 0) })).toThrow(expect.objectContaining({ code: 'checkout.velocity_limited' }));
    expect(() => assertWithinVelocity(limits, { clientAddress: tally(3, 2), merchant: tally(0, 0) })).not.toThrow();
    expect(() => assertWithinVelocity(limits, { clientAddress: tally(3, 3), merchant: tally(0, 0) })).toThrow(/Too many payment attempts/);
  });

  it('judges the merchant apart from the address, and an unknown address only by the merchant', () => {
    expect(() => assertWithinVelocity(limits, { clientAddress: undefined, merchant: tally(99, 0) })).not.toThrow();
    expect(() => assertWithinVelocity(limits, { clientAddress: undefined, merchant: tally(100, 0) })).toThrow();
  });

  it('switches a scope off with a limit of 0', () => {
    const off = { ...limits, perClientAddress: 0, perMerchant: 0 };
    expect(() => assertWithinVelocity(off, { clientAddress: tally(1000, 1000), merchant: tally(1000, 1000) })).not.toThrow();
  });
});

describe('velocityAddress', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:aaaa:bbbb:cccc:dddd', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::1', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:0:0:0:9', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['not an address', 'not an address'],
  ])('%s is counted as %s', (address, scope) => {
    expect(velocityAddress(address)).toBe(scope);
  });
});
