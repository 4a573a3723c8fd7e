import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/application/application-error.ts' {
  /** The event module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'event.not_found': true;
    'listen.live_mode': true;
  }
}

/** The event module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const EVENT_ERRORS = {
  'event.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'listen.live_mode': invalidRequest('test_mode_only'),
} satisfies ErrorTable;
