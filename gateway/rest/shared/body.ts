import type { FastifyRequest } from 'fastify';

/**
 * preValidation of an action whose parameters are all optional (POST …/rotate_secret,
 * …/redeliver): a request without a body is read as `{}`, so the schema judges one shape.
 */
export async function emptyBodyIsEmptyObject(req: FastifyRequest): Promise<void> {
  req.body ??= {};
}
