import type { Clock } from '../../ports/shared/clock.port.ts';

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };
