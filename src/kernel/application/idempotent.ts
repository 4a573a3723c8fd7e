import { ApplicationError } from './application-error.ts';
import { createHash } from 'node:crypto';
import { fromJson, toBinary, toJson, type DescMessage, type JsonValue, type MessageShape } from '@bufbuild/protobuf';
import type { HandlerContext } from '@connectrpc/connect';
import type { Scope } from '../../modules/merchant/domain/caller.ts';
import type { AfterCommit, TransactionScope, UnitOfWork } from '../ports/unit-of-work.port.ts';
import { checkIdempotencyKey, IDEMPOTENCY_KEY_HEADER, IDEMPOTENT_REPLAYED_HEADER } from './idempotency-key.ts';

/** The call an Idempotency-Key guards: its operation name, request and response types. */
export interface IdempotentCall<I extends DescMessage, O extends DescMessage> {
  /** Names the operation in the key's record ("webhook_endpoints.create"): a key used for another one is refused. */
  readonly operation: string;
  readonly input: I;
  /** The request the fingerprint is taken of (a request with card fields: those replaced by their keyed hash). */
  readonly request: MessageShape<I>;
  readonly output: O;
  /**
   * For a request whose fingerprint leaves something out (a CVC, which no record keeps): whether
   * the response remembered under the key answers this request too; false refuses the repeat as
   * idempotency_key_reused. Runs in the repeat's transaction.
   */
  readonly replays?: (tx: TransactionScope, response: MessageShape<O>) => Promise<boolean>;
  /**
   * For a response carrying a secret that must not rest in clear (a webhook signing secret): what
   * of it is kept under the key (the secret replaced by a reference), and how a repeat gets it back
   * (the secret read again where it is kept sealed, in the repeat's transaction).
   */
  readonly atRest?: {
    readonly keep: (response: MessageShape<O>) => MessageShape<O>;
    readonly restore: (tx: TransactionScope, kept: MessageShape<O>) => Promise<MessageShape<O>>;
  };
}

/** Runs a state-changing call in one transaction, once per Idempotency-Key. */
export type Idempotent = <I extends DescMessage, O extends DescMessage>(
  ctx: HandlerContext,
  scope: Scope,
  call: IdempotentCall<I, O>,
  work: (tx: TransactionScope, afterCommit: AfterCommit) => Promise<MessageShape<O>>,
) => Promise<MessageShape<O>>;

const reused = (key: string, operation: string) =>
  new ApplicationError('idempotency.key_reused', `Idempotency-Key "${key}" was already used with a different request (${operation}); use a new key for a new request.`);

/**
 * Creates the idempotency rule of every state-changing call, for any
 * operation: the work runs in one transaction, and with an Idempotency-Key
 * the key is claimed first in that same transaction, its response stored
 * before the commit. The rules are order creation's: the same request
 * repeated later gets the first response (with idempotent-replayed: true)
 * and does nothing; a different request or operation with the key is
 * idempotency_key_reused; a repeat while the first still runs waits for it
 * and then replays its answer; a request that fails rolls back and takes its
 * key with it, so a corrected request can use the key. The fingerprint is a
 * hash of the operation and the request's binary encoding (card fields in it
 * already replaced by their keyed hash, by the caller).
 * @throws ApplicationError idempotency.key_invalid, idempotency.key_reused
 */
export function createIdempotent(uow: UnitOfWork): Idempotent {
  return async (ctx, scope, call, work) => {
    const key = ctx.requestHeader.get(IDEMPOTENCY_KEY_HEADER);
    if (key === null) return uow.run(work);
    checkIdempotencyKey(key);
    const fingerprint = createHash('sha256').update(call.operation).update(toBinary(call.input, call.request)).digest('hex');
    const request = { scope, key, operation: call.operation, fingerprint };
    return uow.run(async (tx, afterCommit) => {
      const found = await tx.requests.claim(request);
      switch (found.kind) {
        case 'replay': {
          const kept = fromJson(call.output, found.response as JsonValue);
          const response = call.atRest ? await call.atRest.restore(tx, kept) : kept;
          if (call.replays && !(await call.replays(tx, response))) throw reused(key, call.operation);
          ctx.responseHeader.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
          return response;
        }
        case 'mismatch':
          throw reused(key, found.operation);
        case 'claimed':
          break;
      }
      const response = await work(tx, afterCommit);
      await tx.requests.complete(request, '', toJson(call.output, call.atRest ? call.atRest.keep(response) : response));
      return response;
    });
  };
}
