/**
 * The background work of the service, each a named worker. `checkout serve`
 * runs them all beside the API by default; `checkout worker --only …` runs
 * some in a process of their own. Several workers of one kind may run
 * against one database (and one NATS) at once: the relay and the sweeper take
 * rows with SKIP LOCKED (the settler and the biller too), dispatchers share the durable consumer and lease
 * deliveries, the janitor's deletes are idempotent.
 */
export const WORKER_NAMES = ['relay', 'dispatcher', 'sweeper', 'settler', 'biller', 'janitor'] as const;

/** Whether a worker needs the events' transport (NATS JetStream, or the event stream in Postgres). */
export function needsEvents(name: WorkerName): boolean {
  return name === 'relay' || name === 'dispatcher';
}

/** A worker's name. */
export type WorkerName = (typeof WORKER_NAMES)[number];

/** What each worker does, for `checkout --help` and the docs. */
export const WORKER_ROLES: { readonly [W in WorkerName]: string } = {
  relay: 'publishes the outbox (events committed with their change) to JetStream, or without NATS_URL to the event stream in Postgres',
  dispatcher: 'delivers events as signed webhooks, with retries',
  sweeper: 'expires orders past their time, settles payment attempts, refunds and captures a crashed process left behind, releases authorizations not captured within 7 days, opens and closes test-mode disputes (every 5 s)',
  settler: 'moves captured money past its settlement delay from the pending to the available balance, makes the daily payouts after the cut-off and sends them (every minute)',
  biller: 'charges subscriptions whose cycle or dunning retry is due, each cycle once (every 10 s), and advances test clocks in bounded steps (every second)',
  janitor: 'deletes idempotency keys past their retention, idle rate-limit buckets, ended failed-authentication counts and expired card tokens (every 10 min)',
};

/**
 * Parses a list of worker names (`relay,dispatcher`); `all` names every one.
 * @throws Error naming the unknown worker and the known ones.
 */
export function parseWorkerNames(text: string): WorkerName[] {
  if (text.trim() === 'all') return [...WORKER_NAMES];
  const names = text.split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (!(WORKER_NAMES as readonly string[]).includes(name)) throw new Error(`Unknown worker "${name}". Workers: ${WORKER_NAMES.join(', ')} (or all).`);
  }
  if (names.length === 0) throw new Error(`Name at least one worker: ${WORKER_NAMES.join(', ')} (or all).`);
  return [...new Set(names)] as WorkerName[];
}

