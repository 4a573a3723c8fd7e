import http, { type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Knex } from 'knex';
import type { DestinationStream, Logger } from 'pino';
import { eventsMode, type Config, type MetricsConfig } from '../src/composition/config.ts';
import { createPrometheusMetrics, type PrometheusMetrics } from '../src/kernel/adapters/prometheus/prometheus-metrics.ts';
import { outboxBacklogAgeSeconds } from '../src/modules/event/adapters/postgres/postgres-event-outbox.ts';
import { eventConsumerAgeSeconds } from '../src/modules/event/adapters/postgres/postgres-event-subscription.ts';
import { bearsToken } from '../gateway/metrics-route.ts';
import { currentRequestId } from '../gateway/request-scope.ts';
import { createLogger, pinoLog, type Log } from '../src/composition/log.ts';
import { StartupError } from '../src/composition/startup.ts';

/** What a process logs and counts with. */
export interface Observability {
  /** The pino logger (the gateway logs through it too). */
  readonly logger: Logger;
  readonly log: Log;
  /** Undefined when METRICS=off. */
  readonly metrics: PrometheusMetrics | undefined;
}

/**
 * The logger and the metrics of a process of one role (`serve`, `worker`):
 * JSON lines at LOG_LEVEL, with the request id while a request is served,
 * and the Prometheus metrics (the outbox's backlog read from the database, and without NATS the backlog
 * of each consumer of the event stream in Postgres). The database is opened after the logger, which reports
 * how it was chosen (the embedded Postgres may take seconds to start): the metrics read it once it is.
 */
export function createObservability(config: Pick<Config, 'logLevel' | 'metrics' | 'natsUrl'>, role: string, knex: () => Knex | undefined, destination?: DestinationStream): Observability {
  const logger = createLogger({ level: config.logLevel, requestId: currentRequestId, destination, base: { role } });
  const onDatabase = <T>(read: (database: Knex) => Promise<T>, none: T) => async () => {
    const database = knex();
    return database ? read(database) : none;
  };
  const metrics = config.metrics.enabled
    ? createPrometheusMetrics({
        role,
        outboxBacklogAgeSeconds: onDatabase(outboxBacklogAgeSeconds, 0),
        eventConsumerAgeSeconds: eventsMode(config) === 'postgres-outbox' ? onDatabase(eventConsumerAgeSeconds, []) : undefined,
      })
    : undefined;
  return { logger, log: pinoLog(logger), metrics };
}

/** A listener serving only GET /metrics. */
export interface MetricsListener {
  readonly port: number;
  close(): Promise<void>;
}

/**
 * Serves GET /metrics on METRICS_HOST:METRICS_PORT (loopback by default):
 * for worker processes, which have no HTTP port of their own, and for an
 * API whose metrics should stay off its public port. Whoever can reach the
 * address may read them, unless METRICS_TOKEN is set: then only with it.
 * @throws StartupError when the port cannot be listened on.
 */
export async function serveMetricsPort(config: MetricsConfig, metrics: PrometheusMetrics, log: Log): Promise<MetricsListener | undefined> {
  if (config.port === undefined) return undefined;
  const server: Server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?', 1)[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Only GET /metrics is served here.\n');
      return;
    }
    if (config.token !== undefined && !bearsToken(req, config.token)) {
      res.writeHead(403, { 'content-type': 'text/plain' }).end('Send METRICS_TOKEN as "Authorization: Bearer <token>".\n');
      return;
    }
    metrics.render().then(
      (text) => res.writeHead(200, { 'content-type': metrics.contentType, 'cache-control': 'no-store' }).end(text),
      (err: unknown) => {
        log.error('metrics could not be rendered', err);
        res.writeHead(500, { 'content-type': 'text/plain' }).end('Metrics could not be rendered; see the log.\n');
      },
    );
  });
  server.keepAliveTimeout = 5_000;
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    throw new StartupError(`Cannot serve metrics on ${config.host}:${config.port}: ${(err as Error).message}. Set METRICS_PORT to a free port.`);
  }
  const port = (server.address() as AddressInfo).port;
  log.info(`Serving metrics on http://${config.host}:${port}/metrics`);
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
