import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The refund module's rules a caller can break. */
  interface DomainErrorCodes {
    'refund.order_not_refundable': true;
    'refund.exceeds_remaining': true;
    'refund.reason_invalid': true;
    'refund.note_invalid': true;
    'refund.amount_invalid': true;
  }
}

/** The refund module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const REFUND_ERRORS = {
  // 409, as for any request the object's state refuses (Stripe answers a refund of an unpaid charge alike).
  'refund.order_not_refundable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_refundable' },
  'refund.exceeds_remaining': invalidRequest('refund_exceeds_remaining'),
  'refund.reason_invalid': invalidRequest('reason_invalid'),
  'refund.note_invalid': invalidRequest('note_invalid'),
  'refund.amount_invalid': invalidRequest('amount_invalid'),
} satisfies ErrorTable;
