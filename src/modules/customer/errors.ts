import { Code } from '@connectrpc/connect';
import { invalidRequest, cardError, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The customer module's rules a caller can break. */
  interface DomainErrorCodes {
    'customer.field_invalid': true;
    'customer.metadata_invalid': true;
    'vault.card_declined': true;
    'vault.card_limit_reached': true;
    'vault.token_invalid': true;
    'vault.unavailable': true;
  }
}

declare module '../../kernel/application/application-error.ts' {
  /** The customer module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'customer.not_found': true;
    'vault.card_not_found': true;
  }
}

/** The customer module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const CUSTOMER_ERRORS = {
  'customer.field_invalid': invalidRequest('parameter_invalid'),
  'customer.metadata_invalid': invalidRequest('metadata_invalid'),
  // The zero-amount verification refused the card: a card error, as a declined payment's.
  'vault.card_declined': cardError('card_declined'),
  'vault.card_limit_reached': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'card_limit_reached' },
  'vault.token_invalid': invalidRequest('token_invalid'),
  'vault.unavailable': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'vault_unavailable' },
  'customer.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'vault.card_not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
} satisfies ErrorTable;
