import type { Clock } from '../../ports/clock.port.ts';

/** The wall clock. */
export const systemClock: Clock = { now: () => new Date() };
