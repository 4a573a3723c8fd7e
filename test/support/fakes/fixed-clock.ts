import type { Clock } from '../../../src/kernel/ports/clock.port.ts';

/** A Clock that stands still until a test moves it. */
export class FixedClock implements Clock {
  #now: Date;

  constructor(start: Date | string = '2026-03-02T10:00:00.000Z') {
    this.#now = new Date(start);
  }

  now(): Date {
    return new Date(this.#now);
  }

  /** Moves the clock on by `ms` milliseconds. */
  advance(ms: number): void {
    this.#now = new Date(this.#now.getTime() + ms);
  }

  /** Sets the clock to `at`. */
  set(at: Date | string): void {
    this.#now = new Date(at);
  }
}
