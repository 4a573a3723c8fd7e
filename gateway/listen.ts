import http2 from 'node:http2';
import net from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createContextValues, type ConnectRouter } from '@connectrpc/connect';
import { CLIENT_ADDRESS } from '../src/application/request-context.ts';
import { connectNodeAdapter } from '@connectrpc/connect-node';

// Every HTTP/2 cleartext connection opens with this preface ("PRI * HTTP/2.0…").
const H2_PREFACE_START = Buffer.from('PRI * HTTP/2');
/** A connection that sends nothing for this long is dropped before it is handed to either server. */
const FIRST_BYTES_TIMEOUT_MS = 30_000;

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 on one port: HTTP/1.1 connections go
 * to the Fastify server (REST, pages, Connect, gRPC-Web), HTTP/2 ones (gRPC
 * clients speak h2c) to a Connect handler with the same routes.
 *
 * close() on the returned server stops accepting and winds down the open
 * connections: HTTP/2 sessions get a GOAWAY (in-flight calls finish), idle
 * HTTP/1.1 keep-alive connections are ended at once and busy ones after their
 * response. The HTTP/1.1 server never listens itself, so its own connection
 * tracking (closeIdleConnections) is not available; without this, close() would
 * wait for clients to drop their keep-alive connections.
 */
export async function listenH1AndH2c(
  http1: Server,
  routes: (router: ConnectRouter) => void,
  port: number,
  host: string,
): Promise<net.Server> {
  const h2 = http2.createServer(connectNodeAdapter({ routes, contextValues: (req) => createContextValues().set(CLIENT_ADDRESS, req.socket.remoteAddress) }));
  /** Connections not yet routed (no preface decision yet). */
  const unrouted = new Set<net.Socket>();
  /** HTTP/1.1 connections, with the number of requests in flight on each. */
  const h1Sockets = new Map<net.Socket, number>();
  let closing = false;

  const onH1Request = (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    const inFlight = h1Sockets.get(socket);
    if (inFlight === undefined) return;
    h1Sockets.set(socket, inFlight + 1);
    res.once('close', () => {
      const left = (h1Sockets.get(socket) ?? 1) - 1;
      h1Sockets.set(socket, left);
      if (closing && left === 0) socket.end();
    });
  };
  http1.on('request', onH1Request);

  const route = (socket: net.Socket) => {
    const chunks: Buffer[] = [];
    const onTimeout = () => socket.destroy();
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      const head = chunks.length === 1 ? chunk : Buffer.concat(chunks);
      const n = Math.min(head.length, H2_PREFACE_START.length);
      const startsLikeH2 = head.subarray(0, n).equals(H2_PREFACE_START.subarray(0, n));
      // A first segment shorter than the preface start that matches it so far: wait for more bytes.
      if (startsLikeH2 && head.length < H2_PREFACE_START.length) return;
      socket.off('data', onData);
      socket.off('timeout', onTimeout);
      socket.setTimeout(0);
      unrouted.delete(socket);
      socket.pause();
      socket.unshift(head);
      if (startsLikeH2) {
        h2.emit('connection', socket);
      } else {
        h1Sockets.set(socket, 0);
        socket.once('close', () => h1Sockets.delete(socket));
        http1.emit('connection', socket);
        socket.resume();
      }
    };
    unrouted.add(socket);
    socket.once('close', () => unrouted.delete(socket));
    socket.setTimeout(FIRST_BYTES_TIMEOUT_MS, onTimeout);
    socket.on('data', onData);
    socket.on('error', () => socket.destroy());
  };

  const windDown = () => {
    closing = true;
    h2.close();
    for (const socket of unrouted) socket.destroy();
    for (const [socket, inFlight] of h1Sockets) if (inFlight === 0) socket.end();
  };

  const server = new (class extends net.Server {
    override close(callback?: (err?: Error) => void): this {
      super.close(callback);
      if (!closing) windDown();
      return this;
    }
  })(route);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}
