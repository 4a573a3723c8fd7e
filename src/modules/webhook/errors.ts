import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The webhook module's rules a caller can break. */
  interface DomainErrorCodes {
    'webhook.url_invalid': true;
    'webhook.url_forbidden': true;
    'webhook.events_invalid': true;
    'webhook.default_endpoint': true;
    'webhook.overlap_invalid': true;
    'webhook.endpoint_limit_reached': true;
  }
}

declare module '../../kernel/application/application-error.ts' {
  /** The webhook module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'webhook.endpoint_not_found': true;
  }
}

/** The webhook module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const WEBHOOK_ERRORS = {
  'webhook.url_invalid': invalidRequest('url_invalid'),
  'webhook.url_forbidden': invalidRequest('url_forbidden'),
  'webhook.events_invalid': invalidRequest('enabled_events_invalid'),
  'webhook.default_endpoint': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'default_endpoint_protected' },
  'webhook.overlap_invalid': invalidRequest('overlap_invalid'),
  'webhook.endpoint_limit_reached': { code: Code.FailedPrecondition, type: 'invalid_request_error', publicCode: 'endpoint_limit_reached' },
  'webhook.endpoint_not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
} satisfies ErrorTable;
