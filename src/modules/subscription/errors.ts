import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/domain/domain-error.ts' {
  /** The subscription module's rules a caller can break. */
  interface DomainErrorCodes {
    'subscription.schedule_invalid': true;
    'subscription.state_invalid': true;
    'test_clock.invalid': true;
  }
}

declare module '../../kernel/application/application-error.ts' {
  /** The subscription module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'subscription.not_found': true;
    'test_clock.not_found': true;
    'test_clock.busy': true;
    'test_clock.too_many_advancing': true;
  }
}

/** The subscription module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const SUBSCRIPTION_ERRORS = {
  'subscription.schedule_invalid': invalidRequest('schedule_invalid'),
  'subscription.state_invalid': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'subscription_state_invalid' },
  'test_clock.invalid': invalidRequest('test_clock_invalid'),
  'subscription.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'test_clock.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'test_clock.busy': { code: Code.Aborted, type: 'invalid_request_error', publicCode: 'test_clock_advancing' },
  // 429: the merchant's bound on clocks advancing at once; one of them being ready makes room.
  'test_clock.too_many_advancing': { code: Code.ResourceExhausted, type: 'invalid_request_error', publicCode: 'too_many_advancing_test_clocks' },
} satisfies ErrorTable;
