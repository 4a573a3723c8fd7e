import { maskCardNumbers } from '../../modules/payment/domain/card.ts';
import { Code, ConnectError } from '@connectrpc/connect';
import { create } from '@bufbuild/protobuf';
import { ErrorDetailSchema } from '../../gen/checkout/v1/errors_pb.ts';
import { DomainError } from '../domain/domain-error.ts';
import { ConflictError, ServiceUnavailableError, UnknownCursorError } from '../ports/errors.ts';
import { ApplicationError } from './application-error.ts';
import { invalidRequest, type ErrorCode, type ErrorMapping, type ErrorTable } from './error-mapping.ts';

/** The kernel's own codes (requests, money, lists, idempotency, concurrent changes); each module maps its codes in its errors.ts. */
export const KERNEL_ERRORS = {
  'request.parameter_missing': invalidRequest('parameter_missing'),
  'request.parameter_invalid': invalidRequest('parameter_invalid'),
  'money.amount_invalid': invalidRequest('amount_invalid'),
  'money.amount_too_large': invalidRequest('amount_too_large'),
  'money.currency_invalid': invalidRequest('currency_invalid'),
  'request.string_invalid': invalidRequest('parameter_invalid_string'),
  'request.id_unknown': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'list.cursor_invalid': invalidRequest('starting_after_invalid'),
  'list.limit_invalid': invalidRequest('limit_invalid'),
  'idempotency.key_invalid': invalidRequest('idempotency_key_invalid'),
  'idempotency.key_reused': { code: Code.FailedPrecondition, type: 'idempotency_error', publicCode: 'idempotency_key_reused' },
  'conflict.concurrent_change': { code: Code.Aborted, type: 'api_error', publicCode: 'concurrent_change' },
} satisfies ErrorTable;

/** Every code mapped: the composed table of the kernel's and every module's parts (src/composition/modules.ts). */
export type CompleteErrorTable = { readonly [K in ErrorCode]: ErrorMapping };

/** Builds a ConnectError carrying our ErrorDetail. */
export function connectError(message: string, mapping: ErrorMapping, param = '', metadata?: Readonly<Record<string, string>>): ConnectError {
  // A card number sent where an id or a name belongs is echoed by some messages: never whole.
  return new ConnectError(maskCardNumbers(message), mapping.code, metadata, [
    { desc: ErrorDetailSchema, value: create(ErrorDetailSchema, { type: mapping.type, code: mapping.publicCode, param: maskCardNumbers(param) }) },
  ]);
}

/**
 * Maps anything a handler threw to the ConnectError a client sees: domain
 * and application errors by `errors` (the composed table; the kernel's part
 * alone when absent), a lost race (ConflictError) as
 * Aborted, an unknown cursor as starting_after_invalid, unreachable stores as
 * Unavailable, and any other fault as Internal with a message that leaks
 * nothing, after onInternal has logged it. Called in one place only: the
 * request guard every service goes through (src/kernel/application/request-guard.ts).
 */
export function toConnectError(err: unknown, onInternal: (err: unknown) => void, errors: ErrorTable = KERNEL_ERRORS): ConnectError {
  const mapped = (err instanceof ApplicationError || err instanceof DomainError) && errors[err.code];
  if (err instanceof ApplicationError && mapped) return connectError(err.message, mapped, err.param, err.headers);
  if (err instanceof DomainError && mapped) return connectError(err.message, mapped, err.param);
  if (err instanceof UnknownCursorError) return connectError(err.message, KERNEL_ERRORS['list.cursor_invalid'], 'starting_after');
  if (err instanceof ConflictError) {
    return connectError(`${err.message} Another request changed it at the same time; retry (with the same Idempotency-Key).`, KERNEL_ERRORS['conflict.concurrent_change']);
  }
  if (err instanceof ServiceUnavailableError) {
    // The caller is told to retry; the operator needs the cause (a database or broker that went away).
    onInternal(err);
    return connectError('The service is temporarily unavailable; retry the request (with the same Idempotency-Key).', {
      code: Code.Unavailable,
      type: 'api_error',
      publicCode: 'service_unavailable',
    });
  }
  if (err instanceof ConnectError) return err;
  onInternal(err);
  return connectError('An internal error occurred; it has been logged.', { code: Code.Internal, type: 'api_error', publicCode: 'internal_error' });
}
