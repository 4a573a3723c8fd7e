import { describe, expect, it } from 'vitest';
import { abortAfter } from './abort-after.ts';

describe('abortAfter', () => {
  it('aborts with a TimeoutError after the time', async () => {
    const deadline = abortAfter(new AbortController().signal, 5);
    await new Promise((resolve) => deadline.signal.addEventListener('abort', resolve));
    expect((deadline.signal.reason as Error).name).toBe('TimeoutError');
  });

  it('aborts with the outer signal, at once when it already has', () => {
    const outer = new AbortController();
    const deadline = abortAfter(outer.signal, 60_000);
    outer.abort(new Error('stop'));
    expect(deadline.signal.reason).toEqual(new Error('stop'));
    deadline.clear();
    expect(abortAfter(outer.signal, 60_000).signal.aborted).toBe(true);
  });

  it('lets go of the outer signal once cleared: it no longer aborts, and the timer is stopped', async () => {
    const outer = new AbortController();
    const deadline = abortAfter(outer.signal, 5);
    deadline.clear();
    outer.abort();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(deadline.signal.aborted).toBe(false);
  });
});
