import { Code } from '@connectrpc/connect';
import { unauthenticated, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/application/application-error.ts' {
  /** The checkout module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'checkout.not_found': true;
    'checkout.token_invalid': true;
    'checkout.client_secret_invalid': true;
  }
}

/** The checkout module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const CHECKOUT_ERRORS = {
  'checkout.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'checkout.token_invalid': { code: Code.PermissionDenied, type: 'permission_error', publicCode: 'checkout_token_invalid' },
  'checkout.client_secret_invalid': unauthenticated('client_secret_invalid'),
} satisfies ErrorTable;
