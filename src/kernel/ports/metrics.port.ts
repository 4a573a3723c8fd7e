import type { DeclineCode } from '../../modules/payment/domain/decline-code.ts';

/**
 * How one payment attempt (one leg, on one route) ended. Every field is of a
 * closed, small set: no order, merchant or attempt ids reach a metric.
 */
export interface PaymentAttemptOutcome {
  /** card, wallet or bank_transfer. */
  readonly method: string;
  /** The acquirer route that answered (simulated_alpha, simulated_beta, virtual_iban, none). */
  readonly route: string;
  /** reversed: approved, but the order could no longer take it (paid or expired meanwhile), so it was given back. */
  readonly outcome: 'succeeded' | 'authorized' | 'declined' | 'reversed';
  /** Why it declined; undefined unless outcome is declined. */
  readonly declineCode: DeclineCode | undefined;
  readonly livemode: boolean;
}

/** Which limit refused a request. */
export type RateLimitScope = 'api_key' | 'card_velocity' | 'payment_link_start' | 'auth_failures';

/** One webhook delivery attempt, answered or not. */
export interface WebhookAttemptReport {
  /** The endpoint's id (we_…): bounded by the endpoints merchants may have, never the URL. */
  readonly endpointId: string;
  readonly succeeded: boolean;
  /** The receiver's HTTP status; null when no answer came (timeout, refused, network error). */
  readonly statusCode: number | null;
  /** Attempts made before this one (0 for the first). */
  readonly attemptCount: number;
  /** From the event's commit to this attempt's end, in ms; undefined when the event's time is unknown. */
  readonly lagMs: number | undefined;
}

/**
 * What the core and the workers count, by role. The composition root gives a
 * Prometheus adapter; unit tests and operator commands take {@link NO_METRICS}.
 * Calls are synchronous and cheap: they run on the hot path.
 */
export interface Metrics {
  /** An attempt's final answer (a soft decline retried on the other route counts as its own declined attempt). */
  paymentAttempt(outcome: PaymentAttemptOutcome): void;
  /** A request refused by a rate limit (the API key's bucket, the client address's failed authentications, the checkout's card-testing limits, or the payment links' start limits). */
  rateLimitRefused(scope: RateLimitScope): void;
  /** One event published by the outbox relay, delayMs after it was committed. */
  outboxPublished(delayMs: number): void;
  /** One webhook delivery attempt ended. */
  webhookAttempt(report: WebhookAttemptReport): void;
}

/** Records one HTTP request of a route: its method, status and duration in seconds. */
export type HttpRequestRecorder = (method: string, statusCode: number, seconds: number) => void;

/** Records one Connect, gRPC or gRPC-Web call of a procedure: its Connect code (ok, not_found, …) and duration in seconds. */
export type RpcCallRecorder = (code: string, seconds: number) => void;

/** Which part of the gateway served a request. */
export type HttpKind = 'rest' | 'checkout' | 'connect' | 'other';

/** What the gateway counts. Recorders are made once per route, so a request only looks up its status class. */
export interface HttpMetrics {
  /** A recorder for one route pattern (`/v1/orders/:id`, never a raw URL). */
  httpRoute(kind: HttpKind, route: string): HttpRequestRecorder;
  /** A recorder for one procedure (`checkout.v1.OrderService/CreateOrder`). */
  rpcProcedure(procedure: string): RpcCallRecorder;
}

/** The Prometheus text exposition of a process's metrics. */
export interface MetricsExposition {
  readonly contentType: string;
  render(): Promise<string>;
}

const nothing = () => undefined;

/** Counts nothing: unit tests and one-shot commands. */
export const NO_METRICS: Metrics & HttpMetrics = {
  paymentAttempt: nothing,
  rateLimitRefused: nothing,
  outboxPublished: nothing,
  webhookAttempt: nothing,
  httpRoute: () => nothing,
  rpcProcedure: () => nothing,
};
