import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The capture module's rules a caller can break. */
  interface DomainErrorCodes {
    'capture.order_not_capturable': true;
    'capture.exceeds_authorized': true;
    'capture.declined': true;
  }
}

/** The capture module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const CAPTURE_ERRORS = {
  // 409 as the other state refusals; an amount above the authorization is a bad parameter (400), as refund_exceeds_remaining.
  'capture.order_not_capturable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_capturable' },
  'capture.exceeds_authorized': invalidRequest('capture_exceeds_authorized'),
  'capture.declined': { code: Code.FailedPrecondition, type: 'card_error', publicCode: 'capture_declined' },
} satisfies ErrorTable;
