import { describe, expect, it } from 'vitest';
import type { DomainEvent } from '../../event/domain/domain-event.ts';
import type { Caller } from '../../merchant/domain/caller.ts';
import type { Order } from '../domain/order.entity.ts';
import type { ClaimResult, IdempotencyRecord } from '../../../kernel/ports/idempotency-store.port.ts';
import type { OrderCreationStore } from '../ports/order-creation-store.port.ts';
import { createCreateOrder } from './create-order.ts';

/** An in-memory creation store: the key map decides, like the unique constraint. */
function memoryStore() {
  const orders: Order[] = [];
  const events: DomainEvent[] = [];
  const keys = new Map<string, IdempotencyRecord>();
  const store: OrderCreationStore = {
    async create(claim, order, event): Promise<ClaimResult> {
      if (claim) {
        const id = `${claim.scope.merchantId}/${claim.scope.livemode}/${claim.key}`;
        const existing = keys.get(id);
        if (existing) return { claimed: false, existing };
        keys.set(id, claim);
      }
      orders.push(order);
      events.push(event);
      return { claimed: true };
    },
  };
  return { orders, events, keys, store };
}

const caller: Caller = { keyId: 'key_1', merchantId: 'mer_1', livemode: false, keyKind: 'secret', checkoutHost: 'https://pay.example' };
const command = { amount: 500n, currency: 'EUR', reference: 'R-1', lineItems: [], returnUrl: undefined, expiresAt: undefined };
let counter = 0;
const ids = { newId: (prefix: string) => `${prefix}${++counter}`, newSecret: (prefix: string) => `${prefix}secret` };
const clock = { now: () => new Date('2026-01-01T00:00:00Z') };

describe('createOrder use case', () => {
  it('writes the order and its event together', async () => {
    const store = memoryStore();
    const create = createCreateOrder({ store: store.store, ids, clock });
    const { order, replayed } = await create(caller, command, undefined);
    expect(replayed).toBe(false);
    expect(store.orders).toEqual([order]);
    expect(store.events.map((e) => [e.type, e.orderId, e.sequence])).toEqual([['order.created', order.id, 1]]);
  });

  it('replays the first order for the same key and request, and refuses the key for another request', async () => {
    const store = memoryStore();
    const create = createCreateOrder({ store: store.store, ids, clock });
    const first = await create(caller, command, 'key-1');
    const again = await create(caller, command, 'key-1');
    expect(again).toEqual({ order: first.order, replayed: true });
    await expect(create(caller, { ...command, amount: 501n }, 'key-1')).rejects.toMatchObject({ code: 'idempotency.key_reused' });
    expect(store.orders).toHaveLength(1);
    expect(store.events).toHaveLength(1);
  });

  it('validates before touching the store', async () => {
    const store = memoryStore();
    const create = createCreateOrder({ store: store.store, ids, clock });
    await expect(create(caller, { ...command, currency: 'EURO' }, 'key-2')).rejects.toMatchObject({ code: 'money.currency_invalid' });
    await expect(create(caller, command, '')).rejects.toMatchObject({ code: 'idempotency.key_invalid' });
    expect(store.keys.size).toBe(0);
    expect(store.orders).toHaveLength(0);
  });
});
