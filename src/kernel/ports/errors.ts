/**
 * A technical fault of a port: the store or broker behind it cannot be
 * reached. Adapters throw it; callers answer "unavailable, try again".
 */
export class ServiceUnavailableError extends Error {
  override readonly name = 'ServiceUnavailableError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/**
 * A change that lost a race at the store: a unique constraint another
 * request claimed first, or a version another request moved on. Adapters
 * translate the store's own error into it; callers answer "conflict, retry".
 */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A list cursor (starting_after) that names nothing of the caller's; the message says which list. */
export class UnknownCursorError extends Error {
  override readonly name = 'UnknownCursorError';
}
