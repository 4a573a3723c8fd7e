import { DomainError } from '../../../kernel/domain/domain-error.ts';

/**
 * Card-testing limits over a sliding window. Every customer submission
 * scores 1 and a declined one scores declineWeight, so a run of random card
 * numbers (mostly declines) is stopped long before ordinary customers, who
 * mostly succeed, come near the limit. A limit of 0 switches that scope off.
 */
export interface VelocityLimits {
  readonly windowMs: number;
  /** Most points one client address may spend in the window, across every merchant. */
  readonly perClientAddress: number;
  /** Most points one merchant's checkouts may spend in the window, in one mode. */
  readonly perMerchant: number;
  /** What a declined submission scores (an approved or pending one scores 1). */
  readonly declineWeight: number;
}

/** Defaults: 10 minutes; 40 points per address (ten declined cards), 2,000 per merchant and mode. */
export const DEFAULT_VELOCITY_LIMITS: VelocityLimits = { windowMs: 10 * 60_000, perClientAddress: 40, perMerchant: 2000, declineWeight: 4 };

/** Submissions in the window, and how many of them were declined. */
export interface AttemptTally {
  readonly attempts: number;
  readonly declines: number;
}

/** The points a tally has spent. */
export function velocityScore(tally: AttemptTally, declineWeight: number): number {
  return tally.attempts - tally.declines + tally.declines * declineWeight;
}

/**
 * Refuses one more submission when either scope has spent its points.
 * @throws DomainError checkout.velocity_limited
 */
export function assertWithinVelocity(limits: VelocityLimits, tallies: { readonly clientAddress: AttemptTally | undefined; readonly merchant: AttemptTally }): void {
  const over = (limit: number, tally: AttemptTally | undefined) => limit > 0 && tally !== undefined && velocityScore(tally, limits.declineWeight) + 1 > limit;
  if (over(limits.perClientAddress, tallies.clientAddress) || over(limits.perMerchant, tallies.merchant)) {
    const minutes = Math.max(1, Math.round(limits.windowMs / 60_000));
    throw new DomainError('checkout.velocity_limited', `Too many payment attempts in a short time. Wait up to ${minutes} minutes and try again.`);
  }
}

/**
 * The scope a client address is counted under: an IPv4 address as it is
 * (IPv4-mapped IPv6 included), an IPv6 address by its /64 network, the
 * smallest block one subscriber is given, so that rotating through one's own
 * addresses does not reset the count. Anything else is kept as given.
 */
export function velocityAddress(address: string): string {
  const mapped = /^::ffff:(\d{1,3}(\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1]!;
  if (!address.includes(':')) return address;
  const [head = '', tail = ''] = address.split('%')[0]!.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = address.includes('::') && tail ? tail.split(':') : [];
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right] : left;
  if (groups.length !== 8 || groups.some((g) => !/^[0-9a-f]{1,4}$/.test(g))) return address;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
