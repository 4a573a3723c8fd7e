/**
 * Every failure the application layer explains to a caller, by stable dotted code: the
 * kernel's own (request strings and ids, lists, idempotency keys, concurrent changes) are
 * here; each module adds its own (authentication, lookups, limits) from its
 * `src/modules/<m>/errors.ts` (declaration merging). The registry is closed and mapped once
 * per edge (the error table of src/composition/modules.ts), as the domain's codes are.
 */
export interface ApplicationErrorCodes {
  'request.id_unknown': true;
  'request.string_invalid': true;
  'list.cursor_invalid': true;
  'list.limit_invalid': true;
  'idempotency.key_invalid': true;
  'idempotency.key_reused': true;
  'conflict.concurrent_change': true;
}

/** An application error's code: a key of {@link ApplicationErrorCodes}, the kernel's or a module's. */
export type ApplicationErrorCode = keyof ApplicationErrorCodes;

/** An expected failure of a use case that is not a rule of the domain. */
export class ApplicationError extends Error {
  override readonly name = 'ApplicationError';
  readonly code: ApplicationErrorCode;
  /** The request parameter at fault, in the API's snake_case spelling. */
  readonly param: string | undefined;
  /** Response metadata the caller is told with the error (a rate limit's Retry-After), if any. */
  readonly headers: Readonly<Record<string, string>> | undefined;

  constructor(code: ApplicationErrorCode, message: string, param?: string, headers?: Readonly<Record<string, string>>) {
    super(message);
    this.code = code;
    this.param = param;
    this.headers = headers;
  }
}
