import { AsyncLocalStorage } from 'node:async_hooks';
import type { FastifyInstance } from 'fastify';

// The id of the request being served, for every log line written while it is (the core's included).
const scope = new AsyncLocalStorage<string>();

/** The id of the request whose work is running now; undefined outside a request (workers, start-up). */
export function currentRequestId(): string | undefined {
  return scope.getStore();
}

/** Runs fn with requestId as the current request's id (for transports the gateway does not serve through Fastify). */
export function inRequestScope<T>(requestId: string, fn: () => T): T {
  return scope.run(requestId, fn);
}

/**
 * Runs every request's hooks and handler with its id as the current request
 * id. Entered at onRequest, and again at preValidation: the body arrives on
 * the socket's events, outside the request's context, so the parser's
 * continuation has lost it. Callback hooks, so that no promise is made per request.
 */
export function registerRequestScope(app: FastifyInstance): void {
  app.addHook('onRequest', (req, _reply, done) => scope.run(req.id, done));
  app.addHook('preValidation', (req, _reply, done) => (scope.getStore() === req.id ? done() : scope.run(req.id, done)));
}
