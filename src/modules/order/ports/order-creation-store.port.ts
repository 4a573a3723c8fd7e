import type { DomainEvent } from '../../event/domain/domain-event.ts';
import type { Order } from '../domain/order.entity.ts';
import type { ClaimResult, IdempotencyRecord } from '../../../kernel/ports/idempotency-store.port.ts';

/**
 * Writes a new order, its order.created event and (when the request carried
 * one) its idempotency key, atomically. The hot path of the API, kept to one
 * round trip by adapters that can.
 */
export interface OrderCreationStore {
  /**
   * Claims the key (if any) and, only when the claim succeeds, stores the
   * order and appends the event. A key already held answers its record and
   * writes nothing.
   */
  create(claim: IdempotencyRecord | undefined, order: Order, event: DomainEvent): Promise<ClaimResult>;
}
