import { Code } from '@connectrpc/connect';
import { unauthenticated, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/application/application-error.ts' {
  /** The merchant module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'auth.key_missing': true;
    'auth.key_malformed': true;
    'auth.key_invalid': true;
    'auth.secret_key_required': true;
    'rate_limit.exceeded': true;
    'auth.too_many_failures': true;
  }
}

/** The merchant module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const MERCHANT_ERRORS = {
  'auth.key_missing': unauthenticated('api_key_missing'),
  'auth.key_malformed': unauthenticated('api_key_malformed'),
  'auth.key_invalid': unauthenticated('api_key_invalid'),
  'auth.secret_key_required': { code: Code.PermissionDenied, type: 'permission_error', publicCode: 'secret_key_required' },
  'rate_limit.exceeded': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'rate_limit_exceeded' },
  // Its own code: an SDK retries rate_limit_exceeded by itself, but a bad key sent again fails again.
  'auth.too_many_failures': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'too_many_authentication_failures' },
} satisfies ErrorTable;
