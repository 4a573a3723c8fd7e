import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type {
  HttpKind,
  HttpMetrics,
  HttpRequestRecorder,
  Metrics,
  MetricsExposition,
  PaymentAttemptOutcome,
  RpcCallRecorder,
  WebhookAttemptReport,
} from '../../ports/metrics.port.ts';

/** Request latencies, in seconds: from a cached read (a few ms) to a slow acquirer (seconds). */
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Lags of events and webhooks, in seconds: from a few ms on a quiet system to the hours of retries. */
const LAG_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800, 3600, 21_600];

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** "2xx" for 204; anything outside 100-599 counts as 5xx (a response that never completed). */
function statusClassIndex(statusCode: number): number {
  const i = Math.floor(statusCode / 100) - 1;
  return i >= 0 && i < 5 ? i : 4;
}

/** Options of {@link createPrometheusMetrics}. */
export interface PrometheusMetricsOptions {
  /** The process's role, a label on every series (`api`, `worker`): several processes scrape as one job. */
  readonly role: string;
  /** Age in seconds of the oldest unpublished outbox event (0 when none), read at each scrape; absent: not reported. */
  readonly outboxBacklogAgeSeconds?: () => Promise<number>;
  /**
   * Without NATS: each durable consumer of the event stream in Postgres and the age in seconds of the oldest
   * event it has not handled (0 when none), read at each scrape; absent: not reported (JetStream keeps its own).
   */
  readonly eventConsumerAgeSeconds?: () => Promise<readonly { readonly consumer: string; readonly ageSeconds: number }[]>;
  /** Node's own metrics (CPU, memory, event loop lag, GC); on unless false. */
  readonly processMetrics?: boolean;
}

/** The metrics of a process, with their text exposition. */
export type PrometheusMetrics = Metrics & HttpMetrics & MetricsExposition;

/**
 * A Prometheus adapter of the Metrics ports over prom-client, on a registry
 * of its own (never the global one: tests start several services in one
 * process). Labels are closed sets and route patterns only: no ids of
 * orders, merchants or attempts, no raw URLs. Children (one series each) are
 * made once and kept, so that recording is a lookup and an addition.
 */
export function createPrometheusMetrics(options: PrometheusMetricsOptions): PrometheusMetrics {
  const registry = new Registry();
  registry.setDefaultLabels({ role: options.role });
  if (options.processMetrics !== false) collectDefaultMetrics({ register: registry });

  const http = new Histogram({
    name: 'checkout_http_request_duration_seconds',
    help: 'HTTP requests served over HTTP/1.1, by part (rest, checkout, connect, other), method, route pattern and status class; _count is the request rate.',
    labelNames: ['kind', 'method', 'route', 'status_class'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const rpc = new Histogram({
    name: 'checkout_rpc_duration_seconds',
    help: 'Connect, gRPC and gRPC-Web calls (HTTP/1.1 and h2c), by procedure and Connect code, until the response headers (a server stream: until it starts).',
    labelNames: ['procedure', 'code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const payments = new Counter({
    name: 'checkout_payment_attempts_total',
    help: 'Payment attempts by method, acquirer route, outcome (succeeded, authorized, declined, reversed), decline code ("" unless declined) and mode.',
    labelNames: ['method', 'route', 'outcome', 'decline_code', 'mode'] as const,
    registers: [registry],
  });
  const refusals = new Counter({
    name: 'checkout_rate_limit_refusals_total',
    help: 'Requests refused by a rate limit: api_key (an API key spent its tokens, HTTP 429), card_velocity (the checkout\'s card-testing limits) or payment_link_start (orders started on payment links, per address and per link).',
    labelNames: ['scope'] as const,
    registers: [registry],
  });
  const published = new Histogram({
    name: 'checkout_outbox_publish_delay_seconds',
    help: 'From an event\'s commit to its publication by the outbox relay (on JetStream, or without NATS appended to the event stream in Postgres).',
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  const deliveryLag = new Histogram({
    name: 'checkout_webhook_delivery_lag_seconds',
    help: 'From an event\'s commit to the end of a webhook delivery attempt (answered, timed out or refused), by result and attempt (first, retry).',
    labelNames: ['result', 'attempt'] as const,
    buckets: LAG_BUCKETS,
    registers: [registry],
  });
  const deliveryFailures = new Counter({
    name: 'checkout_webhook_delivery_failures_total',
    help: 'Failed webhook delivery attempts by endpoint id and reason (the status class of the answer, or no_answer).',
    labelNames: ['endpoint_id', 'reason'] as const,
    registers: [registry],
  });
  // Endpoints come and go (a merchant may create and delete them in a loop): the series of the ones that
  // failed least recently are dropped beyond MAX_FAILING_ENDPOINT_SERIES, so memory stays bounded.
  const failingEndpoints = recentlyFailing((endpointId, reasons) => {
    for (const reason of reasons) deliveryFailures.remove(endpointId, reason);
  });
  const deliveries = new Counter({
    name: 'checkout_webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts by result (succeeded, failed).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  if (options.outboxBacklogAgeSeconds) {
    const read = options.outboxBacklogAgeSeconds;
    new Gauge({
      name: 'checkout_outbox_oldest_unpublished_age_seconds',
      help: 'Age of the oldest event committed and not yet published (0 when the outbox is empty); read from Postgres at each scrape.',
      registers: [registry],
      async collect() {
        try {
          this.set(await read());
        } catch {
          // Postgres did not answer: the series is left out of this scrape rather than reported as 0.
          this.reset();
        }
      },
    });
  }
  if (options.eventConsumerAgeSeconds) {
    const read = options.eventConsumerAgeSeconds;
    new Gauge({
      name: 'checkout_event_consumer_oldest_unhandled_age_seconds',
      help: 'Without NATS: per durable consumer of the event stream in Postgres, the age of the oldest event appended and not yet handled (0 when none); read from Postgres at each scrape.',
      labelNames: ['consumer'] as const,
      registers: [registry],
      async collect() {
        this.reset();
        try {
          for (const { consumer, ageSeconds } of await read()) this.labels(consumer).set(ageSeconds);
        } catch {
          // Postgres did not answer: the series are left out of this scrape rather than reported as 0.
        }
      },
    });
  }

  const paymentSeries = new Map<string, Counter.Internal>();
  const publishedChild = published;
  const lagSeries = {
    succeeded: [deliveryLag.labels('succeeded', 'first'), deliveryLag.labels('succeeded', 'retry')],
    failed: [deliveryLag.labels('failed', 'first'), deliveryLag.labels('failed', 'retry')],
  };
  const attemptSeries = { succeeded: deliveries.labels('succeeded'), failed: deliveries.labels('failed') };
  const refusalSeries = {
    api_key: refusals.labels('api_key'),
    card_velocity: refusals.labels('card_velocity'),
    payment_link_start: refusals.labels('payment_link_start'),
    auth_failures: refusals.labels('auth_failures'),
  };

  return {
    contentType: registry.contentType,
    render: () => registry.metrics(),

    paymentAttempt(o: PaymentAttemptOutcome) {
      const mode = o.livemode ? 'live' : 'test';
      const declineCode = o.declineCode ?? '';
      const key = `${o.method}|${o.route}|${o.outcome}|${declineCode}|${mode}`;
      let series = paymentSeries.get(key);
      if (!series) {
        series = payments.labels(o.method, o.route, o.outcome, declineCode, mode);
        paymentSeries.set(key, series);
      }
      series.inc();
    },
    rateLimitRefused(scope) {
      refusalSeries[scope].inc();
    },
    outboxPublished(delayMs) {
      publishedChild.observe(Math.max(0, delayMs) / 1000);
    },
    webhookAttempt(r: WebhookAttemptReport) {
      const result = r.succeeded ? 'succeeded' : 'failed';
      attemptSeries[result].inc();
      if (r.lagMs !== undefined) lagSeries[result][r.attemptCount === 0 ? 0 : 1]!.observe(Math.max(0, r.lagMs) / 1000);
      if (!r.succeeded) {
        const reason = r.statusCode === null ? 'no_answer' : STATUS_CLASSES[statusClassIndex(r.statusCode)]!;
        deliveryFailures.labels(r.endpointId, reason).inc();
        failingEndpoints.touch(r.endpointId, reason);
      }
    },

    httpRoute(kind: HttpKind, route: string): HttpRequestRecorder {
      // One row of five status-class series per method, made on first use.
      const byMethod = new Map<string, (Histogram.Internal<'kind' | 'method' | 'route' | 'status_class'> | undefined)[]>();
      return (method, statusCode, seconds) => {
        let row = byMethod.get(method);
        if (!row) {
          row = [undefined, undefined, undefined, undefined, undefined];
          byMethod.set(method, row);
        }
        const i = statusClassIndex(statusCode);
        let series = row[i];
        if (!series) {
          series = http.labels(kind, method, route, STATUS_CLASSES[i]!);
          row[i] = series;
        }
        series.observe(seconds);
      };
    },
    rpcProcedure(procedure: string): RpcCallRecorder {
      const byCode = new Map<string, Histogram.Internal<'procedure' | 'code'>>();
      return (code, seconds) => {
        let series = byCode.get(code);
        if (!series) {
          series = rpc.labels(procedure, code);
          byCode.set(code, series);
        }
        series.observe(seconds);
      };
    },
  };
}

/** At most this many endpoints keep a failure series; the least recently failing lose theirs first. */
export const MAX_FAILING_ENDPOINT_SERIES = 500;

/** Endpoints in the order they last failed, with their reasons; `drop` is told of each evicted one. */
function recentlyFailing(drop: (endpointId: string, reasons: readonly string[]) => void, max = MAX_FAILING_ENDPOINT_SERIES) {
  const order = new Map<string, Set<string>>();
  return {
    touch(endpointId: string, reason: string) {
      const reasons = order.get(endpointId) ?? new Set<string>();
      order.delete(endpointId); // re-inserted last: a Map keeps insertion order
      order.set(endpointId, reasons.add(reason));
      while (order.size > max) {
        const [oldest, oldReasons] = order.entries().next().value as [string, Set<string>];
        order.delete(oldest);
        drop(oldest, [...oldReasons]);
      }
    },
  };
}
