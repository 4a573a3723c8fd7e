import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { HttpKind, HttpMetrics, HttpRequestRecorder, MetricsExposition } from '../src/kernel/ports/metrics.port.ts';
import { RestError, toRestError } from './rest/shared/rest-error.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Records the route's requests (set when the route is added, so a request looks nothing up by name). */
    recordRequest?: HttpRequestRecorder;
  }
}

/** Which part of the gateway a route pattern belongs to. */
export function httpKindOf(route: string): HttpKind {
  if (route.startsWith('/v1/')) return 'rest';
  if (route.startsWith('/c/') || route.startsWith('/l/')) return 'checkout';
  // Connect procedures are served at /<package>.<Service>/<Method>.
  if (/^\/[a-z][a-z0-9_]*(\.[a-z0-9_]+)*\.[A-Z]\w*\/\w+$/.test(route)) return 'connect';
  return 'other';
}

/**
 * Counts every HTTP/1.1 request by its route pattern (never the raw URL),
 * method and status class, with its duration. Requests that match no route
 * count under the route "unmatched".
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: HttpMetrics): void {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, recordRequest: metrics.httpRoute(httpKindOf(route.url), route.url) };
  });
  const unmatched = metrics.httpRoute('other', 'unmatched');
  app.addHook('onResponse', (req, reply, done) => {
    (req.routeOptions.config.recordRequest ?? unmatched)(req.method, reply.statusCode, reply.elapsedTime / 1000);
    done();
  });
}

const LOOPBACK = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1|::ffff:127\.\d{1,3}\.\d{1,3}\.\d{1,3})$/;
// The headers proxies and CDNs set for the client they relay. A local proxy that sets none of them (a TCP
// relay, a tunnel) makes remote clients look local: put METRICS_TOKEN in front of such set-ups (docs/operations.md).
const FORWARDING_HEADERS = [
  'forwarded',
  'x-forwarded-for',
  'x-real-ip',
  'x-original-forwarded-for',
  'x-client-ip',
  'true-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
  'x-cluster-client-ip',
  'via',
] as const;

/** Whether a request came straight from this machine: a loopback peer, and no proxy on it relaying someone else's request. */
export function fromLoopback(req: IncomingMessage): boolean {
  return LOOPBACK.test(req.socket.remoteAddress ?? '') && FORWARDING_HEADERS.every((name) => req.headers[name] === undefined);
}

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
export function bearsToken(req: IncomingMessage, token: string): boolean {
  const match = /^bearer +(.+)$/i.exec(req.headers.authorization ?? '');
  if (!match) return false;
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}

/**
 * GET /metrics: the Prometheus text exposition, to a client on this machine
 * (loopback, not relayed by a proxy) or one that sends the METRICS_TOKEN as a
 * bearer token; anyone else gets 403. The figures carry no merchant's data,
 * but they tell the service's volume, which is nobody's business outside.
 */
export function registerMetricsRoute(app: FastifyInstance, exposition: MetricsExposition, token: string | undefined): void {
  app.get('/metrics', async (req: FastifyRequest, reply: FastifyReply) => {
    if (!fromLoopback(req.raw) && !(token !== undefined && bearsToken(req.raw, token))) {
      const err = new RestError(
        403,
        'invalid_request_error',
        'metrics_forbidden',
        'Metrics are served to this machine (loopback) or, with METRICS_TOKEN set, to a client that sends it as "Authorization: Bearer <token>".',
      );
      const mapped = toRestError(err, req.id);
      return reply.code(mapped.status).send(mapped.body);
    }
    const text = await exposition.render();
    return reply.header('content-type', exposition.contentType).header('cache-control', 'no-store').send(text);
  });
}
