import http2 from 'node:http2';
import net from 'node:net';
import type { Server } from 'node:http';
import type { ConnectRouter } from '@connectrpc/connect';
import { connectNodeAdapter } from '@connectrpc/connect-node';

// Every HTTP/2 cleartext connection opens with this preface ("PRI * HTTP/2.0…").
const H2_PREFACE_START = Buffer.from('PRI * HTTP/2');

/**
 * Serves HTTP/1.1 and cleartext HTTP/2 on one port: HTTP/1.1 connections go
 * to the Fastify server (REST, pages, Connect, gRPC-Web), HTTP/2 ones (gRPC
 * clients speak h2c) to a Connect handler with the same routes.
 */
export async function listenH1AndH2c(
  http1: Server,
  routes: (router: ConnectRouter) => void,
  port: number,
  host: string,
): Promise<net.Server> {
  const h2 = http2.createServer(connectNodeAdapter({ routes }));
  const server = net.createServer((socket) => {
    socket.once('data', (head: Buffer) => {
      socket.pause();
      socket.unshift(head);
      const isH2 = head.subarray(0, H2_PREFACE_START.length).equals(H2_PREFACE_START);
      (isH2 ? h2 : http1).emit('connection', socket);
      if (!isH2) socket.resume();
    });
    socket.on('error', () => socket.destroy());
  });
  server.on('close', () => h2.close());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}
