import { describe, expect, it } from 'vitest';
import { movesToNextRoute, nextRoute, routesOrDefault } from './routing.ts';

const declined = (declineCode: 'insufficient_funds' | 'issuer_unavailable' | 'do_not_honor' | 'expired_card' | 'stolen_card' | 'authentication_failed') => ({ kind: 'declined', declineCode }) as const;

describe('failover between routes', () => {
  it('moves a soft decline on to the next route', () => {
    expect(movesToNextRoute(declined('insufficient_funds'))).toBe(true);
    expect(movesToNextRoute(declined('issuer_unavailable'))).toBe(true);
  });

  it('never moves a hard decline, an approval or a challenge', () => {
    for (const code of ['do_not_honor', 'expired_card', 'stolen_card', 'authentication_failed'] as const) expect(movesToNextRoute(declined(code))).toBe(false);
    expect(movesToNextRoute({ kind: 'approved' })).toBe(false);
    expect(movesToNextRoute({ kind: 'authentication_required' })).toBe(false);
  });

  it('goes to the next position while one is left, then lets the answer stand', () => {
    expect(nextRoute(2, 0, declined('insufficient_funds'))).toBe(1);
    expect(nextRoute(2, 1, declined('insufficient_funds'))).toBeUndefined();
    expect(nextRoute(3, 1, declined('issuer_unavailable'))).toBe(2);
    expect(nextRoute(1, 0, declined('insufficient_funds'))).toBeUndefined();
    expect(nextRoute(3, 0, declined('do_not_honor'))).toBeUndefined();
    expect(nextRoute(3, 0, { kind: 'approved' })).toBeUndefined();
  });

  it("takes the merchant's own routes, or the mode's default when it has none", () => {
    expect(routesOrDefault(['simulated_beta'], ['simulated_alpha', 'simulated_beta'])).toEqual(['simulated_beta']);
    expect(routesOrDefault([], ['simulated_alpha', 'simulated_beta'])).toEqual(['simulated_alpha', 'simulated_beta']);
    expect(routesOrDefault([], [])).toEqual([]);
  });
});
