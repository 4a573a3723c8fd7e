import { Code } from '@connectrpc/connect';
import type { ApplicationErrorCode } from './application-error.ts';
import type { DomainErrorCode } from '../domain/domain-error.ts';

/** Error families, as in the REST error body's "type". */
export type ErrorType = 'invalid_request_error' | 'card_error' | 'authentication_error' | 'permission_error' | 'idempotency_error' | 'rate_limit_error' | 'api_error';

/** How one error code reaches a caller: the Connect code (REST's HTTP status follows from it), the REST body's type and public code. */
export interface ErrorMapping {
  readonly code: Code;
  readonly type: ErrorType;
  /** The public, snake_case error code. */
  readonly publicCode: string;
}

/** Every code a caller can be told: the domain's rules and the application's failures. */
export type ErrorCode = DomainErrorCode | ApplicationErrorCode;

/** A module's part of the error table: its codes, each mapped once (composed in src/composition/modules.ts). */
export type ErrorTable = { readonly [K in ErrorCode]?: ErrorMapping };

/** A parameter the caller got wrong (400). */
export const invalidRequest = (publicCode: string): ErrorMapping => ({ code: Code.InvalidArgument, type: 'invalid_request_error', publicCode });
/** A card the caller got wrong, or its issuer refused (400, card_error). */
export const cardError = (publicCode: string): ErrorMapping => ({ code: Code.InvalidArgument, type: 'card_error', publicCode });
/** Credentials missing or wrong (401). */
export const unauthenticated = (publicCode: string): ErrorMapping => ({ code: Code.Unauthenticated, type: 'authentication_error', publicCode });
