import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The dispute module's rules a caller can break. */
  interface DomainErrorCodes {
    'dispute.order_not_disputable': true;
    'dispute.reason_invalid': true;
    'dispute.amount_invalid': true;
    'dispute.exceeds_remaining': true;
    'dispute.not_submittable': true;
    'dispute.evidence_past_due': true;
    'evidence.field_invalid': true;
  }
}

declare module '../../kernel/application/application-error.ts' {
  /** The dispute module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'dispute.not_found': true;
  }
}

/** The dispute module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const DISPUTE_ERRORS = {
  'dispute.order_not_disputable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'order_not_disputable' },
  'dispute.reason_invalid': invalidRequest('reason_invalid'),
  'dispute.amount_invalid': invalidRequest('amount_invalid'),
  'dispute.exceeds_remaining': invalidRequest('dispute_exceeds_remaining'),
  // 409: the dispute's state refuses the submission, as Stripe answers a closed dispute.
  'dispute.not_submittable': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'dispute_not_submittable' },
  'dispute.evidence_past_due': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'dispute_evidence_past_due' },
  'evidence.field_invalid': invalidRequest('evidence_invalid'),
  'dispute.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
} satisfies ErrorTable;
