import { ApplicationError } from './application-error.ts';
import { createHash } from 'node:crypto';
import { fromJson, toBinary, toJson, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import type { Scope } from '../domain/merchant/caller.ts';
import type { RequestLedger } from '../ports/idempotency-store.port.ts';
import { checkIdempotencyKey } from './create-order.ts';
import { IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from './order-service.ts';

/** A reservation older than this was left by a request that died; a repeat of it may take it over. */
export const STALE_RESERVATION_MS = 60_000;

/** Runs a state-changing call once per Idempotency-Key. */
export type Idempotent = <I extends DescMessage, O extends DescMessage>(
  ctx: HandlerContext,
  scope: Scope,
  call: { readonly operation: string; readonly input: I; readonly request: MessageShape<I>; readonly output: O },
  work: () => Promise<MessageShape<O>>,
) => Promise<MessageShape<O>>;

/**
 * Creates the idempotency rule of every state-changing call other than order
 * creation (which keeps its one-statement path): with an Idempotency-Key, the
 * key is reserved first; the same request repeated later gets the first
 * response (with idempotent-replayed: true) and does nothing; a different
 * request or operation with the key is idempotency_key_reused; a repeat while
 * the first still runs is idempotency_key_in_use (409). A request that fails
 * gives its key back. Without a key, the work just runs.
 * @throws ApplicationError idempotency.key_invalid, idempotency.key_reused, idempotency.key_in_use
 */
export function createIdempotent(ledger: RequestLedger): Idempotent {
  return async (ctx, scope, call, work) => {
    const key = ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER);
    if (key === null) return work();
    checkIdempotencyKey(key);
    const fingerprint = createHash('sha256').update(call.operation).update(toBinary(call.input, call.request)).digest('hex');
    const request = { scope, key, operation: call.operation, fingerprint };
    const found = await ledger.reserve(request, STALE_RESERVATION_MS);
    switch (found.kind) {
      case 'replay':
        ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
        return fromJson(call.output, found.response as JsonValue);
      case 'in_progress':
        throw new ApplicationError('idempotency.key_in_use', `A request with Idempotency-Key "${key}" is still being processed; retry it in a moment.`);
      case 'mismatch':
        throw new ApplicationError(
          'idempotency.key_reused',
          `Idempotency-Key "${key}" was already used with a different request (${found.operation}); use a new key for a new request.`,
        );
      case 'reserved':
        break;
    }
    let response: MessageShape<typeof call.output>;
    try {
      response = await work();
    } catch (err) {
      await ledger.release(request);
      throw err;
    }
    await ledger.complete(request, '', toJson(call.output, response));
    return response;
  };
}
