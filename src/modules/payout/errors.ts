import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/application/application-error.ts' {
  /** The payout module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'payout.not_found': true;
    'payout.status_invalid': true;
  }
}

/** The payout module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const PAYOUT_ERRORS = {
  'payout.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'payout.status_invalid': invalidRequest('parameter_invalid'),
} satisfies ErrorTable;
