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
