import { invalidRequest, type ErrorTable } from '../../kernel/application/error-mapping.ts';

declare module '../../kernel/application/application-error.ts' {
  /** The test helpers module's failures that are not rules of the domain. */
  interface ApplicationErrorCodes {
    'test_helpers.live_mode': true;
    'test_helpers.outcome_invalid': true;
  }
}

/** The test helpers module's error codes, each mapped once to what a caller sees (Connect code; REST status, type and code). */
export const TEST_HELPERS_ERRORS = {
  'test_helpers.live_mode': invalidRequest('test_mode_only'),
  'test_helpers.outcome_invalid': invalidRequest('parameter_invalid'),
} satisfies ErrorTable;
