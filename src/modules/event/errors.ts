import { Code } from '@connectrpc/connect';
import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/application/application-error.ts' {
  /** The event module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'event.not_found': true;
    'listen.live_mode': true;
    'listen.too_many': true;
    'listen.fell_behind': true;
  }
}

/** The event module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const EVENT_ERRORS = {
  'event.not_found': { code: Code.NotFound, type: 'invalid_request_error', publicCode: 'resource_missing' },
  'listen.live_mode': invalidRequest('test_mode_only'),
  // 429: the merchant's bound on listens open at once (per process); one ending makes room.
  'listen.too_many': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'too_many_listens' },
  // 429: the client fell more than the buffer's bound behind; the stream was ended, a new one may start.
  'listen.fell_behind': { code: Code.ResourceExhausted, type: 'rate_limit_error', publicCode: 'listen_fell_behind' },
} satisfies ErrorTable;
