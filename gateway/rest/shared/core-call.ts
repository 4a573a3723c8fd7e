import { createContextValues, type CallOptions } from '@connectrpc/connect';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { RATE_LIMIT_HEADERS } from '../../../src/modules/merchant/application/authenticate.ts';
import { IDEMPOTENT_REPLAYED_HEADER } from '../../../src/kernel/application/idempotency-key.ts';
import { CLIENT_ADDRESS } from '../../../src/kernel/application/request-context.ts';

/** Headers the REST API forwards to the core unchanged. */
const FORWARDED_HEADERS = ['authorization', 'idempotency-key'] as const;

/** Response headers of the core that the REST answer carries too. */
const RETURNED_HEADERS: readonly string[] = [...RATE_LIMIT_HEADERS, IDEMPOTENT_REPLAYED_HEADER];

declare module 'fastify' {
  interface FastifyRequest {
    /** Response headers of the core calls this request made, for the REST answer. */
    coreHeaders?: Record<string, string>;
  }
}

/**
 * Options for a core call made on behalf of a REST request: its Authorization
 * and Idempotency-Key go in with its client address (`req.ip`, which honours
 * TRUST_PROXY: what the failed-authentication limit counts by, as on the
 * Connect mount), and the core's rate-limit and replay headers come back onto
 * the REST answer.
 */
export function coreCall(req: FastifyRequest): CallOptions {
  const headers: Record<string, string> = { 'request-id': req.id };
  for (const name of FORWARDED_HEADERS) {
    const value = req.headers[name];
    if (typeof value === 'string') headers[name] = value;
  }
  return {
    headers,
    contextValues: createContextValues().set(CLIENT_ADDRESS, req.ip),
    onHeader: (received) => {
      for (const name of RETURNED_HEADERS) {
        const value = received.get(name);
        if (value !== null) (req.coreHeaders ??= {})[name] = value;
      }
    },
  };
}

/** Copies the core's response headers onto every REST answer of this scope, errors included. */
export function returnCoreHeaders(app: FastifyInstance): void {
  app.addHook('onSend', async (req, reply) => {
    if (req.coreHeaders) reply.headers(req.coreHeaders);
  });
}
