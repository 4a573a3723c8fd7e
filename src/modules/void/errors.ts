import { Code } from '@connectrpc/connect';
import { type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The void module's rules a caller can break. */
  interface DomainErrorCodes {
    'void.order_not_voidable': true;
    'void.order_already_settled': true;
  }
}

/** The void module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const VOID_ERRORS = {
  'void.order_not_voidable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_voidable' },
  'void.order_already_settled': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_already_settled' },
} satisfies ErrorTable;
