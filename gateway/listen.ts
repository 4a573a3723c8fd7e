import http2, { type Http2ServerRequest, type Http2ServerResponse, type Http2Session, type ServerHttp2Stream } from 'node:http2';
import type net from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createContextValues, type ConnectRouter } from '@connectrpc/connect';
import { CLIENT_ADDRESS } from '../src/kernel/application/request-context.ts';
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits, type TrustProxy } from './options.ts';
import { clientAddressResolver } from './client-address.ts';
import { connectNodeListener, type OnHandlerError } from './connect-mount.ts';
import { h2RequestProblem, newRequestId, sendH2Error } from './client-errors.ts';
import { inRequestScope } from './request-scope.ts';
import type { HttpMetrics } from '../src/kernel/ports/metrics.port.ts';

/** Options of {@link listenH1AndH2c}. */
export interface ListenOptions {
  /** Timeouts and the connection cap (the documented defaults when absent). */
  readonly limits?: ConnectionLimits;
  /** Which proxies may name the client of an h2c call (as the gateway's trustProxy for HTTP/1.1). */
  readonly trustProxy?: TrustProxy;
  /** The signal the Connect handlers end their server streams on; close() expects it aborted first. */
  readonly shutdownSignal?: AbortSignal;
  /** Once close() has begun, this signal cuts every connection still open (the process's shutdown grace is spent); SHUTDOWN_GRACE_MS after close() when absent. */
  readonly cutSignal?: AbortSignal;
  /** Counts h2c calls by procedure and code. */
  readonly metrics?: HttpMetrics;
}

/** How long close() lets open calls finish before it cuts the connections still open, when no cutSignal says when. */
export const SHUTDOWN_GRACE_MS = 10_000;

// Every HTTP/2 cleartext connection opens with this preface ("PRI * HTTP/2.0…").
const H2_PREFACE_START = Buffer.from('PRI * HTTP/2');

/** Streams one h2c session may have open at once (Node's default is unlimited). */
const H2_MAX_CONCURRENT_STREAMS = 100;

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 on one port: HTTP/1.1 connections go
 * to the Fastify server (REST, pages, Connect, gRPC-Web), HTTP/2 ones (gRPC
 * clients speak h2c) to a Connect handler with the same routes.
 *
 * The Fastify server itself listens, so Node's own limits work on it:
 * `headersTimeout`, `requestTimeout` and `keepAliveTimeout` are checked on
 * every HTTP/1.1 connection, and `maxConnections` counts every accepted
 * connection, whichever protocol it turns out to speak. Its 'connection'
 * listener is replaced by one that reads the first bytes: an HTTP/2 preface
 * goes to the HTTP/2 server, anything else to Node's HTTP/1.1 handler. The
 * HTTP/2 sessions get the same limits by hand (see superviseSession).
 *
 * close() on the returned server (it is `http1`) stops accepting and winds
 * down the open connections: HTTP/2 sessions get a GOAWAY (in-flight calls
 * finish), HTTP/1.1 connections with no request in flight are closed at
 * once and busy ones after their response; whatever is still open when
 * `cutSignal` fires (or after SHUTDOWN_GRACE_MS without one) is cut.
 * @throws Error when `http1` is already listening, or the port cannot be bound.
 */
export async function listenH1AndH2c(
  http1: Server,
  routes: (router: ConnectRouter) => void,
  port: number,
  host: string,
  onHandlerError: OnHandlerError = () => undefined,
  options: ListenOptions = {},
): Promise<Server> {
  if (http1.listening) throw new Error('listenH1AndH2c: the HTTP/1.1 server is already listening; build a gateway per listener.');
  const limits = options.limits ?? DEFAULT_CONNECTION_LIMITS;
  const clientAddress = clientAddressResolver(options.trustProxy ?? false);
  const connect = connectNodeListener(routes, {
    contextValues: (req) => createContextValues().set(CLIENT_ADDRESS, clientAddress(req)),
    onError: onHandlerError,
    shutdownSignal: options.shutdownSignal,
    metrics: options.metrics,
    // h2c carries only the Connect services; anything else gets the REST error body, not an empty 404.
    notFound: (req, res) =>
      sendH2Error(res, 404, 'route_not_found', `Unrecognized request URL (${req.method} ${String(req.url).split('?')[0]}). Over HTTP/2 (h2c) this port serves only the Connect and gRPC services; use HTTP/1.1 for the REST API.`),
  });
  const h2 = http2.createServer({ settings: { maxConcurrentStreams: H2_MAX_CONCURRENT_STREAMS } }, (req: Http2ServerRequest, res: Http2ServerResponse) => {
    const problem = h2RequestProblem(req);
    if (problem) return sendH2Error(res, problem.status, problem.code, problem.message);
    // The call's id, as Fastify gives one to each HTTP/1.1 request: the core answers under it (request-id),
    // and every line logged while the call runs carries it. A client's own request-id header is not taken.
    const requestId = newRequestId();
    req.headers['request-id'] = requestId;
    res.setHeader('request-id', requestId);
    inRequestScope(requestId, () => connect(req, res));
  });
  const sessions = new Set<Http2Session>();
  h2.on('session', (session) => {
    sessions.add(session);
    session.once('close', () => sessions.delete(session));
    superviseSession(session, limits);
  });

  http1.headersTimeout = limits.headersTimeoutMs;
  http1.requestTimeout = limits.requestTimeoutMs;
  http1.keepAliveTimeout = limits.keepAliveTimeoutMs;
  // Node checks the header and request deadlines on this interval (the createServer option, read when the
  // server starts listening; @types/node lacks the property); a tenth of the header timeout keeps the overshoot small.
  (http1 as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = Math.min(1000, Math.max(50, Math.floor(limits.headersTimeoutMs / 10)));
  http1.maxConnections = limits.maxConnections;

  /** Connections not yet routed (no preface decision yet). */
  const unrouted = new Set<net.Socket>();
  /** HTTP/1.1 connections, with the number of requests in flight on each. */
  const h1Sockets = new Map<net.Socket, number>();
  let closing = false;

  http1.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const inFlight = h1Sockets.get(socket);
    if (inFlight === undefined) return;
    h1Sockets.set(socket, inFlight + 1);
    res.once('close', () => {
      const left = (h1Sockets.get(socket) ?? 1) - 1;
      h1Sockets.set(socket, left);
      if (closing && left === 0) socket.destroy();
    });
  });

  // Node's HTTP/1.1 connection handler (and any other 'connection' listener) now runs only for HTTP/1.1 sockets.
  const h1ConnectionListeners = http1.listeners('connection') as ((socket: net.Socket) => void)[];
  http1.removeAllListeners('connection');
  http1.on('connection', (socket: net.Socket) => {
    // Until routed, a half-closed connection is simply closed (the HTTP/1.1 server keeps half-open ones for its own reasons).
    socket.allowHalfOpen = false;
    const chunks: Buffer[] = [];
    // A hard deadline, not an idle timeout: a client trickling one byte at a time cannot extend it.
    const deadline = setTimeout(() => socket.destroy(), limits.headersTimeoutMs);
    deadline.unref();
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      const head = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      const n = Math.min(head.length, H2_PREFACE_START.length);
      const startsLikeH2 = head.subarray(0, n).equals(H2_PREFACE_START.subarray(0, n));
      // A first segment shorter than the preface start that matches it so far: wait for more bytes.
      if (startsLikeH2 && head.length < H2_PREFACE_START.length) return;
      socket.off('data', onData);
      clearTimeout(deadline);
      unrouted.delete(socket);
      socket.pause();
      socket.unshift(head);
      if (startsLikeH2) {
        h2.emit('connection', socket);
      } else {
        socket.allowHalfOpen = true;
        h1Sockets.set(socket, 0);
        socket.once('close', () => h1Sockets.delete(socket));
        for (const listener of h1ConnectionListeners) listener.call(http1, socket);
        socket.resume();
      }
    };
    unrouted.add(socket);
    socket.once('close', () => {
      clearTimeout(deadline);
      unrouted.delete(socket);
    });
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  });

  const windDown = () => {
    closing = true;
    h2.close();
    for (const socket of unrouted) socket.destroy();
    for (const [socket, inFlight] of h1Sockets) if (inFlight === 0) socket.destroy();
    // A call that does not finish in time (a client that stopped reading, a stream nobody ended) does not hold the shutdown.
    // The caller's cutSignal says when (the process's shutdown grace); without one, SHUTDOWN_GRACE_MS does.
    const cut = () => {
      for (const socket of h1Sockets.keys()) socket.destroy();
      for (const session of sessions) session.destroy();
    };
    if (!options.cutSignal) setTimeout(cut, SHUTDOWN_GRACE_MS).unref();
    else if (options.cutSignal.aborted) cut();
    else options.cutSignal.addEventListener('abort', cut, { once: true });
  };
  // close() must also reach the HTTP/2 sessions and the unrouted sockets, which Node's HTTP/1.1 server does not know.
  const closeHttp1 = http1.close.bind(http1);
  http1.close = (callback?: (err?: Error) => void) => {
    if (!closing) windDown();
    return closeHttp1(callback);
  };

  await new Promise<void>((resolve, reject) => {
    http1.once('error', reject);
    http1.listen(port, host, () => {
      http1.off('error', reject);
      resolve();
    });
  });
  return http1;
}

/**
 * Gives an h2c session the limits HTTP/1.1 gets from Node: the preface and
 * SETTINGS within the header timeout, each stream's request (up to its
 * END_STREAM) within the request timeout, and a session with no open stream
 * closed after the keep-alive timeout. Responses are not bounded, so a
 * server stream (EventService/ListenEvents) runs as long as the client
 * listens. Every deadline is hard: bytes trickled in do not extend it.
 */
function superviseSession(session: Http2Session, limits: ConnectionLimits): void {
  const timers = new Set<NodeJS.Timeout>();
  const after = (ms: number, fn: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      fn();
    }, ms);
    timer.unref();
    timers.add(timer);
    return timer;
  };
  const stop = (timer: NodeJS.Timeout | undefined) => {
    if (!timer) return;
    clearTimeout(timer);
    timers.delete(timer);
  };

  const preface = after(limits.headersTimeoutMs, () => session.destroy());
  session.once('remoteSettings', () => stop(preface));

  let open = 0;
  let idle: NodeJS.Timeout | undefined;
  const startIdle = () => {
    idle = after(limits.keepAliveTimeoutMs, () => session.close());
  };
  startIdle();
  session.on('stream', (stream: ServerHttp2Stream) => {
    open += 1;
    stop(idle);
    // remoteClose is the peer's END_STREAM as the protocol saw it, read or not by the handler.
    const receiving = after(limits.requestTimeoutMs, () => {
      if (!stream.destroyed && stream.state.remoteClose !== 1) stream.close(http2.constants.NGHTTP2_CANCEL);
    });
    // A response that makes no progress (a peer that grants no flow-control window and reads nothing) is bounded
    // like a request: pending bytes that do not shrink for the request timeout reset the stream. A quiet server
    // stream with nothing to send is not stalled, so `checkout listen` can wait for events as long as it likes.
    let stalledSince: number | undefined;
    let pending = 0;
    const watch = setInterval(() => {
      const now = Date.now();
      const buffered = stream.bufferSize;
      if (buffered === 0 || buffered < pending) stalledSince = undefined;
      else stalledSince ??= now;
      pending = buffered;
      if (stalledSince !== undefined && now - stalledSince >= limits.requestTimeoutMs && !stream.destroyed) stream.close(http2.constants.NGHTTP2_CANCEL);
    }, Math.min(1000, Math.max(50, Math.floor(limits.requestTimeoutMs / 10))));
    watch.unref();
    stream.once('close', () => {
      clearInterval(watch);
      stop(receiving);
      open -= 1;
      if (open === 0 && !session.closed && !session.destroyed) startIdle();
    });
  });
  session.once('close', () => {
    for (const timer of timers) clearTimeout(timer);
    timers.clear();
  });
}
