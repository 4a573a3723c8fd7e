import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { ConnectRouter } from '@connectrpc/connect';
import type { FastifyInstance } from 'fastify';
import type { CheckReadiness } from '../src/kernel/application/check-readiness.ts';
import type { GatewayServerOptions } from './options.ts';
import { buildGateway, type GatewayOptions } from './app.ts';
import { listenH1AndH2c, SHUTDOWN_GRACE_MS } from './listen.ts';

/** The gateway listening on its port. */
export interface HttpServer {
  readonly app: FastifyInstance;
  readonly port: number;
  /**
   * Stops accepting, ends server streams, lets calls in flight finish (closing each connection once it is idle),
   * and closes the app; once `abandon` fires (SHUTDOWN_GRACE_MS after close() without one), every connection still
   * open is cut.
   */
  close(abandon?: AbortSignal): Promise<void>;
}

/** A port that cannot be listened on, with a message for the operator. */
export class ListenError extends Error {
  override readonly name = 'ListenError';
}

/** Descriptors kept free for what the process opens itself: Postgres pools, NATS, webhook deliveries, files. */
const DESCRIPTOR_RESERVE = 512;

/**
 * Warns when MAX_CONNECTIONS leaves too few file descriptors under the
 * process's limit (`ulimit -n`), where a flood of connections would starve
 * the Postgres pool (EMFILE). Linux only; elsewhere it says nothing.
 */
function warnIfDescriptorsShort(maxConnections: number, warn: (line: string) => void): void {
  let limit: number;
  try {
    const line = readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max open files'));
    limit = Number(line?.split(/\s{2,}/)[1]);
  } catch {
    return;
  }
  if (Number.isFinite(limit) && maxConnections + DESCRIPTOR_RESERVE > limit) {
    warn(`MAX_CONNECTIONS (${maxConnections}) leaves fewer than ${DESCRIPTOR_RESERVE} of the ${limit} file descriptors this process may open (ulimit -n); lower MAX_CONNECTIONS or raise the limit.`);
  }
}

/**
 * Builds the gateway over the core's routes and listens on the port its
 * options name: REST, the checkout pages, Connect and gRPC-Web over HTTP/1.1,
 * gRPC (and Connect) over h2c, with the options' connection limits (the
 * process composition, server/service.ts, hands them over from the configuration).
 * `onApp` sees the app before it listens. `observability` gives the
 * composition root's logger and metrics (the app's own pino logger, at
 * LOG_LEVEL, and no metrics without it).
 * @throws ListenError when the port cannot be listened on.
 */
export async function serveHttp(
  options: GatewayServerOptions,
  routes: (router: ConnectRouter) => void,
  readiness: CheckReadiness,
  onApp: (app: FastifyInstance) => void,
  observability: Pick<GatewayOptions, 'loggerInstance' | 'metrics' | 'simulatedIssuer'> = {},
): Promise<HttpServer> {
  // Aborted first on close: server streams (checkout listen) end, so their connections do not hold the shutdown.
  const shutdown = new AbortController();
  // Aborted when the process's shutdown grace is spent: every connection still open is cut.
  const cut = new AbortController();
  const app = await buildGateway({
    routes,
    publicUrl: options.publicUrl,
    logger: { level: options.logLevel },
    loggerInstance: observability.loggerInstance,
    metrics: observability.metrics,
    simulatedIssuer: observability.simulatedIssuer,
    trustProxy: options.trustProxy,
    readiness,
    shutdownSignal: shutdown.signal,
  });
  onApp(app);
  await app.ready();
  const log = app.log;
  let server;
  try {
    server = await listenH1AndH2c(app.server, routes, options.port, options.host, (err, where) => log.error({ err }, `Connect handler ${where} failed`), {
      limits: options.connectionLimits,
      trustProxy: options.trustProxy,
      shutdownSignal: shutdown.signal,
      cutSignal: cut.signal,
      metrics: observability.metrics?.http,
    });
  } catch (err) {
    await app.close();
    throw new ListenError(`Cannot listen on ${options.host}:${options.port}: ${(err as Error).message}. Set PORT to a free port.`);
  }
  warnIfDescriptorsShort(options.connectionLimits.maxConnections, (line) => log.warn(line));
  let lastDropWarning = 0;
  server.on('drop', () => {
    // One line a minute at most: a flood of refused connections must not flood the log as well.
    if (Date.now() - lastDropWarning < 60_000) return;
    lastDropWarning = Date.now();
    log.warn(`Refusing new connections: MAX_CONNECTIONS (${options.connectionLimits.maxConnections}) are open.`);
  });
  return {
    app,
    port: (server.address() as AddressInfo).port,
    async close(abandon) {
      shutdown.abort();
      const onAbandon = () => cut.abort();
      if (!abandon) setTimeout(onAbandon, SHUTDOWN_GRACE_MS).unref();
      else if (abandon.aborted) onAbandon();
      else abandon.addEventListener('abort', onAbandon, { once: true });
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await app.close();
    },
  };
}
