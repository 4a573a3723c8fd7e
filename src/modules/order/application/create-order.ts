import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { checkIdempotencyKey } from '../../../kernel/application/idempotency-key.ts';
import { createHash } from 'node:crypto';
import { createOrder, validateCreateOrder, type CreateOrderCommand } from '../domain/create-order.ts';
import { EVENT_ID_PREFIX } from '../../event/domain/domain-event.ts';
import { ORDER_ID_PREFIX, type Order } from '../domain/order.entity.ts';
import type { Caller } from '../../merchant/domain/caller.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { OrderCreationStore } from '../ports/order-creation-store.port.ts';
import { hashClientSecret, newClientSecret } from '../../checkout/application/checkout-authorization.ts';

/** Operation name under which idempotency keys of order creation are stored. */
export const CREATE_ORDER_OPERATION = 'orders.create';

/** The created order, and whether it is the replay of an earlier request with the same key. */
export interface CreateOrderResult {
  readonly order: Order;
  readonly replayed: boolean;
  /**
   * The order's client secret, only when this call created the order: the service stores only its
   * hash, so a replay (and any later read) cannot answer it again.
   */
  readonly clientSecret?: string;
}

/** Creates an order, honouring an optional idempotency key. */
export type CreateOrderUseCase = (caller: Caller, command: CreateOrderCommand, idempotencyKey: string | undefined, fingerprintExtras?: readonly string[]) => Promise<CreateOrderResult>;

/**
 * Creates the order-creation use case. The idempotency key, the order and its
 * order.created event are written atomically; concurrent requests with one key
 * are decided by the key's unique constraint.
 */
export function createCreateOrder(deps: { readonly store: OrderCreationStore; readonly ids: IdGenerator; readonly clock: Clock }): CreateOrderUseCase {
  return async (caller, rawCommand, idempotencyKey, fingerprintExtras = []) => {
    const now = deps.clock.now();
    const command = validateCreateOrder(rawCommand, now);
    if (idempotencyKey !== undefined) checkIdempotencyKey(idempotencyKey);
    const orderId = deps.ids.newId(ORDER_ID_PREFIX);
    const clientSecret = newClientSecret(orderId, deps.ids.newSecret(''));
    const { order, event } = createOrder(command, {
      orderId,
      eventId: deps.ids.newId(EVENT_ID_PREFIX),
      merchantId: caller.merchantId,
      livemode: caller.livemode,
      checkoutHost: caller.checkoutHost,
      checkoutToken: deps.ids.newSecret(''),
      clientSecretHash: hashClientSecret(clientSecret),
      now,
    });
    const fingerprint = idempotencyKey === undefined ? '' : fingerprintOf(command, fingerprintExtras);
    const claim = await deps.store.create(
      idempotencyKey === undefined ? undefined : { scope: caller, key: idempotencyKey, operation: CREATE_ORDER_OPERATION, fingerprint, order },
      order,
      event,
    );
    if (claim.claimed) return { order, replayed: false, clientSecret };
    const { existing } = claim;
    if (existing.operation !== CREATE_ORDER_OPERATION || existing.fingerprint !== fingerprint) {
      throw new ApplicationError(
        'idempotency.key_reused',
        `Idempotency-Key "${idempotencyKey}" was already used with a different request (${existing.operation}); use a new key for a new request.`,
      );
    }
    return { order: existing.order, replayed: true };
  };
}

/** A stable hash of the validated request, so a reused key can be told apart from a retry. */
function fingerprintOf(command: CreateOrderCommand, extras: readonly string[]): string {
  const canonical = JSON.stringify([
    CREATE_ORDER_OPERATION,
    command.amount.toString(),
    command.currency,
    command.reference,
    command.lineItems.map((item) => [item.name, item.amount.toString()]),
    command.returnUrl ?? null,
    command.expiresAt?.toISOString() ?? null,
    // Only a manual order's: the fingerprints of keys stored before capture methods existed stay as they were.
    ...(command.captureMethod === 'manual' ? ['manual'] : []),
    // Likewise only when set: a customer, and what an off-session charge adds (card, confirm).
    ...(command.customerId ? [`customer:${command.customerId}`] : []),
    ...extras,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}
