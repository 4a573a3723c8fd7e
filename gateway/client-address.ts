import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import proxyAddr from '@fastify/proxy-addr';
import type { FastifyServerOptions } from 'fastify';
import type { TrustProxy } from './options.ts';

/**
 * The client's address of a request, by the same rule Fastify applies to
 * `req.ip` with the same trust: the socket's peer, or with trusted proxies in
 * front, the first X-Forwarded-For entry from the right that is not one of
 * them (the leftmost entries are the client's to write, so never "all").
 */
export function clientAddressResolver(trust: TrustProxy): (req: IncomingMessage | Http2ServerRequest) => string | undefined {
  if (trust === false) return (req) => req.socket.remoteAddress;
  const trusted = typeof trust === 'number' ? (_addr: string, i: number) => i < trust : proxyAddr.compile([...trust]);
  return (req) => (req.socket.remoteAddress ? proxyAddr(req as IncomingMessage, trusted) : undefined);
}

/** The same trust as Fastify's `trustProxy` option takes it. */
export function fastifyTrustProxy(trust: TrustProxy): FastifyServerOptions['trustProxy'] {
  return trust === false ? false : typeof trust === 'number' ? (_address: string, hop: number) => hop < trust : [...trust];
}
