import { describe, expect, it } from 'vitest';
import { InMemoryProcessedEventStore, processEventOnce } from './processed-events.ts';

describe('InMemoryProcessedEventStore', () => {
  it('says true the first time and false after', async () => {
    const store = new InMemoryProcessedEventStore();
    expect(await store.markProcessed('evt_1')).toBe(true);
    expect(await store.markProcessed('evt_1')).toBe(false);
    expect(await store.markProcessed('evt_2')).toBe(true);
    await store.unmark('evt_1');
    expect(await store.markProcessed('evt_1')).toBe(true);
  });

  it('forgets the oldest ids beyond maxEntries', async () => {
    const store = new InMemoryProcessedEventStore({ maxEntries: 2 });
    for (const id of ['evt_1', 'evt_2', 'evt_3']) await store.markProcessed(id);
    expect(store.size).toBe(2);
    expect(await store.markProcessed('evt_3')).toBe(false);
    expect(await store.markProcessed('evt_1')).toBe(true);
  });

  it('forgets ids after the TTL', async () => {
    let now = 0;
    const store = new InMemoryProcessedEventStore({ ttlMs: 1000, now: () => now });
    await store.markProcessed('evt_1');
    now = 999;
    expect(await store.markProcessed('evt_1')).toBe(false);
    now = 1000;
    expect(await store.markProcessed('evt_1')).toBe(true);
  });

  it('refuses nonsense bounds', () => {
    expect(() => new InMemoryProcessedEventStore({ maxEntries: 0 })).toThrow(RangeError);
    expect(() => new InMemoryProcessedEventStore({ ttlMs: -1 })).toThrow(RangeError);
  });
});

describe('processEventOnce', () => {
  it('runs the handler once per event id', async () => {
    const store = new InMemoryProcessedEventStore();
    const handled: string[] = [];
    const event = { id: 'evt_1', type: 'order.paid' };
    expect(await processEventOnce(store, event, (e) => handled.push(e.type))).toEqual({ status: 'processed', result: 1 });
    expect(await processEventOnce(store, event, (e) => handled.push(e.type))).toEqual({ status: 'duplicate' });
    expect(handled).toEqual(['order.paid']);
  });

  it('forgets the id when the handler fails, so the redelivery is processed', async () => {
    const store = new InMemoryProcessedEventStore();
    const event = { id: 'evt_1' };
    await expect(
      processEventOnce(store, event, () => {
        throw new Error('database down');
      }),
    ).rejects.toThrow('database down');
    expect(await processEventOnce(store, event, () => 'ok')).toEqual({ status: 'processed', result: 'ok' });
  });
});
