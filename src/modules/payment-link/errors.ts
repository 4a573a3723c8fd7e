import { Code } from '@connectrpc/connect';
import { type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The payment link module's rules a caller can break. */
  interface DomainErrorCodes {
    'checkout.link_used': true;
    'checkout.link_inactive': true;
  }
}

declare module '../../kernel/application/application-error.ts' {
  /** The payment link module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'payment_link.not_found': true;
    'payment_link.busy': true;
  }
}

/** The payment link module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const PAYMENT_LINK_ERRORS = {
  // A single-use link paid, or being paid, through another of its orders: this payment never started.
  'checkout.link_used': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'payment_link_used' },
  'checkout.link_inactive': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'payment_link_inactive' },
  'payment_link.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  // Too many orders started on payment links from one address, or on one link: retry after Retry-After.
  'payment_link.busy': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'payment_link_busy' },
} satisfies ErrorTable;
