import { ApplicationError } from './application-error.ts';

/** Header that carries the idempotency key, on Connect, gRPC and REST alike. */
export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
/** Response header set when a create is answered from an earlier request with the same key. */
export const IDEMPOTENT_REPLAYED_HEADER = 'idempotent-replayed';

/** Longest idempotency key accepted. */
export const MAX_IDEMPOTENCY_KEY_LENGTH = 255;

/** Keys the service claims for itself (a subscription cycle's order); a merchant's key may not begin so. */
export const RESERVED_KEY_PREFIX = 'subscription_cycle:';

/**
 * Checks an Idempotency-Key's format.
 * @throws ApplicationError idempotency.key_invalid
 */
export function checkIdempotencyKey(key: string): void {
  if (key.length === 0 || key.length > MAX_IDEMPOTENCY_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key)) {
    throw new ApplicationError('idempotency.key_invalid', `Idempotency-Key must be 1 to ${MAX_IDEMPOTENCY_KEY_LENGTH} printable ASCII characters without spaces, e.g. a UUID.`, 'Idempotency-Key');
  }
  if (key.startsWith(RESERVED_KEY_PREFIX)) {
    throw new ApplicationError('idempotency.key_invalid', `Idempotency-Key may not begin with "${RESERVED_KEY_PREFIX}": the service keys the orders of subscription cycles so.`, 'Idempotency-Key');
  }
}
