import type { Metrics, PaymentAttemptOutcome } from '../../../kernel/ports/metrics.port.ts';
import type { DeclineCode } from '../domain/decline-code.ts';
import type { PaymentChange } from '../domain/payment.entity.ts';

/** Where attempts' outcomes are counted; nothing is counted without it. */
export type AttemptMetrics = Pick<Metrics, 'paymentAttempt'> | undefined;

/** Counts an attempt's outcome (by method, route and decline code) once it is recorded. */
export function countAttempt(metrics: AttemptMetrics, change: PaymentChange, outcome: PaymentAttemptOutcome['outcome'], declineCode: DeclineCode | undefined): void {
  metrics?.paymentAttempt({ method: change.leg.method, route: change.leg.route, outcome, declineCode, livemode: change.payment.livemode });
}
