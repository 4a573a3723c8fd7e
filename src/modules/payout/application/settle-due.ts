import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { Settlement } from '../ports/settlement.port.ts';

/** Runs settlement until nothing due is left; answers how many orders it settled. */
export type SettleDue = (options?: { readonly scope?: { readonly merchantId: string; readonly livemode: boolean }; readonly ignoreDelay?: boolean }) => Promise<number>;

/** Orders per statement: large enough to be set-based, small enough to keep each transaction short. */
const BATCH = 5000;

/** Creates the settlement run (the settler worker's, and the test helper's with ignoreDelay). */
export function createSettleDue(deps: { readonly settlement: Settlement; readonly clock: Clock }): SettleDue {
  return async (options = {}) => {
    const now = deps.clock.now();
    let total = 0;
    for (;;) {
      const settled = await deps.settlement.settleDue({ now, scope: options.scope, ignoreDelay: options.ignoreDelay ?? false, limit: BATCH });
      total += settled;
      if (settled < BATCH) return total;
    }
  };
}
