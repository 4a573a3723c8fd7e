/**
 * Every rule of the domain a caller can break, by stable dotted code. The kernel's own
 * (requests, money) are here; each module adds its rules to this interface from its
 * `src/modules/<m>/errors.ts` (declaration merging), beside their mappings. The application's
 * codes (authentication, lookups, lists, idempotency, limits) are a registry of their own
 * (src/kernel/application/application-error.ts). Both are closed at the composition: the
 * error table (src/composition/modules.ts) must map each code, so a new one cannot go unmapped.
 */
export interface DomainErrorCodes {
  'request.parameter_missing': true;
  'request.parameter_invalid': true;
  'money.amount_invalid': true;
  'money.amount_too_large': true;
  'money.currency_invalid': true;
}

/** A domain error's code: a key of {@link DomainErrorCodes}, the kernel's or a module's. */
export type DomainErrorCode = keyof DomainErrorCodes;

/**
 * A broken rule of the domain: bad input, a state that does not allow the
 * change. Technical faults (database down) are not DomainErrors.
 */
export class DomainError extends Error {
  override readonly name = 'DomainError';
  readonly code: DomainErrorCode;
  /** The request parameter at fault, in the API's snake_case spelling. */
  readonly param: string | undefined;

  constructor(code: DomainErrorCode, message: string, param?: string) {
    super(message);
    this.code = code;
    this.param = param;
  }
}

/** Shorthand for a validation failure on one parameter. */
export function invalid(code: DomainErrorCode, param: string, message: string): DomainError {
  return new DomainError(code, message, param);
}
