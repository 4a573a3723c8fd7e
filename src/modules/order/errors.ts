import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The order module's rules a caller can break. */
  interface DomainErrorCodes {
    'order.reference_invalid': true;
    'order.line_items_invalid': true;
    'order.line_items_sum_mismatch': true;
    'order.return_url_invalid': true;
    'order.expires_at_invalid': true;
    'order.capture_method_invalid': true;
  }
}

declare module '../../kernel/application/application-error.ts' {
  /** The order module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'order.not_found': true;
    'order.customer_unknown': true;
    'order.card_unknown': true;
  }
}

/** The order module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const ORDER_ERRORS = {
  'order.reference_invalid': invalidRequest('reference_invalid'),
  'order.line_items_invalid': invalidRequest('line_items_invalid'),
  'order.line_items_sum_mismatch': invalidRequest('line_items_sum_mismatch'),
  'order.return_url_invalid': invalidRequest('return_url_invalid'),
  'order.expires_at_invalid': invalidRequest('expires_at_invalid'),
  'order.capture_method_invalid': invalidRequest('capture_method_invalid'),
  'order.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  // A body naming an unknown customer or card is a bad parameter (400), as Stripe answers it.
  'order.customer_unknown': invalidRequest('resource_missing'),
  'order.card_unknown': invalidRequest('resource_missing'),
} satisfies ErrorTable;
