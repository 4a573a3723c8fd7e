import type { Knex } from 'knex';
import type { NatsConnection } from 'nats';
import type { Config, ConnectedConfig, EventsMode } from './config.ts';
import { connectNats, ensureStream, StreamConflictError, type StreamOptions } from '../modules/event/adapters/nats/jetstream.ts';
import { JetStreamEventPublisher } from '../modules/event/adapters/nats/jetstream-event-publisher.ts';
import { JetStreamEventSubscription, NatsEventFeed } from '../modules/event/adapters/nats/jetstream-event-subscription.ts';
import { NatsDependencyProbe } from '../modules/event/adapters/nats/nats-dependency-probe.ts';
import { PostgresOutboxReader } from '../modules/event/adapters/postgres/postgres-event-outbox.ts';
import { PostgresEventNotifications } from '../modules/event/adapters/postgres/postgres-event-notifications.ts';
import { PostgresEventSubscription } from '../modules/event/adapters/postgres/postgres-event-subscription.ts';
import { PostgresEventFeed } from '../modules/event/adapters/postgres/postgres-event-feed.ts';
import type { EventPublisher } from '../modules/event/ports/event-publisher.port.ts';
import type { OutboxReader } from '../modules/event/ports/event-outbox.port.ts';
import type { EventFeed, EventSubscription } from '../modules/event/ports/event-subscription.port.ts';
import type { DependencyProbe } from '../kernel/ports/dependency-probe.port.ts';
import type { Log } from './log.ts';
import { StartupError } from './startup.ts';

/** The stream options of this installation, from the configuration and the installation id in its database. */
export function streamOptions(config: Pick<Config, 'natsStream' | 'natsSubjectPrefix'> & Partial<Pick<Config, 'natsStreamReplicas'>>, installationId: string): StreamOptions {
  return { stream: config.natsStream, subjectPrefix: config.natsSubjectPrefix, duplicateWindowMs: 10 * 60_000, installationId, replicas: config.natsStreamReplicas ?? 1 };
}

/** What the relay and the consumers of a process work with, once the events' transport is usable. */
export interface EventChannels {
  /** The relay's reader and broker: JetStream, or none (the reader appends to the event stream in Postgres as it marks). */
  relay(knex: Knex): { readonly reader: OutboxReader; readonly publisher: EventPublisher | undefined };
  /** A durable subscription (the dispatcher's, "webhook-dispatcher") over connections of the given pool. */
  subscription(knex: Knex, durable: string): EventSubscription;
}

/**
 * How the events of a process travel: NATS JetStream when NATS_URL is set,
 * otherwise the event stream in Postgres (one node; docs/architecture.md,
 * "Events without NATS"). The same ports either way: the relay, the
 * dispatcher and the live tail do not know which.
 */
export interface EventTransport {
  readonly mode: EventsMode;
  /**
   * Resolves with the channels once usable: at once without NATS; with NATS once it answers and the
   * stream proved ours, or with undefined when it never will be (another installation's stream) or
   * the transport closed.
   */
  readonly ready: Promise<EventChannels | undefined>;
  /** The live tail behind ListenEvents. */
  readonly feed: EventFeed;
  /** What /readyz reports: `events` with its mode (and `nats` as before with NATS), none of them required. */
  readonly probes: readonly DependencyProbe[];
  /** Where the events go, for the workers' lines: "JetStream stream CHECKOUT_EVENTS on nats://…", "the event stream in Postgres". */
  readonly description: string;
  /** How events travel, for the start-up line of `serve`. */
  readonly summary: string;
  /**
   * The first step of a stop (see {@link EventLink.windDown}): with NATS, a connect still being tried ends and a
   * connection whose server has gone is closed at once. Without NATS there is no broker to give up on: the
   * consumers stop with their workers and the LISTEN connection closes in close().
   */
  windDown(): void;
  /**
   * Closes the transport, once the workers have stopped: with NATS, the connection drained (see
   * {@link EventLink.close}); without, the LISTEN connection closed (see PostgresEventNotifications.close).
   * Once `abandon` fires, the connection is closed at once and nothing more is waited for.
   */
  close(abandon?: AbortSignal): Promise<void>;
}

/** A NATS_URL as it may be shown in the log: credentials in any of its servers (`nats://user:pass@host`, `nats://token@host`) hidden. */
export function redactNatsUrl(url: string): string {
  return url.replace(/\/\/[^@/,]*@/g, '//***@');
}

/** A probe reported as `events`, with the mode beside its status. */
function eventsProbe(mode: EventsMode, probe: () => Promise<void>): DependencyProbe {
  return { name: 'events', mode, probe };
}

/**
 * Sets up the events' transport of a process. With NATS_URL: connects to
 * NATS (see {@link linkNats}; start-up waits for it up to waitMs, or until
 * `startSignal` fires). Without: the event stream in Postgres, usable at
 * once, with one LISTEN connection for the process's wake-ups.
 * @throws StartupError when the JetStream stream belongs to another installation and NATS answered within waitMs.
 * @throws StartCancelledError when `startSignal` fires before NATS answered.
 */
export async function linkEvents(config: ConnectedConfig, installationId: string, knex: Knex, name: string, waitMs: number, log: Log, startSignal?: AbortSignal): Promise<EventTransport> {
  if (config.natsUrl === undefined) {
    let warned = false;
    const notifications = new PostgresEventNotifications(config.databaseUrl, {
      // Once per process: the consumers poll meanwhile, and the line would repeat every reconnect.
      onError: (err) => {
        if (warned) return;
        warned = true;
        log.warn('event stream: cannot LISTEN for new events in Postgres; consumers poll instead (every 100 ms)', err);
      },
    });
    const channels: EventChannels = {
      relay: (relayKnex) => ({ reader: new PostgresOutboxReader(relayKnex, { appendToStream: true }), publisher: undefined }),
      subscription: (consumerKnex, durable) => new PostgresEventSubscription(consumerKnex, durable, { installationId, notifications }),
    };
    return {
      mode: 'postgres-outbox',
      ready: Promise.resolve(channels),
      feed: new PostgresEventFeed(knex, { notifications }),
      probes: [eventsProbe('postgres-outbox', async () => void (await knex.raw('select 1')))],
      description: 'the event stream in Postgres',
      summary: 'events through Postgres, no NATS: single node (set NATS_URL to run on NATS JetStream)',
      windDown: () => undefined,
      close: (abandon) => notifications.close(abandon),
    };
  }
  const link = await linkNats(config, config.natsUrl, installationId, name, waitMs, log, startSignal);
  const nats = new NatsDependencyProbe(() => link.current());
  const channels = (nc: NatsConnection): EventChannels => ({
    relay: (relayKnex) => ({ reader: new PostgresOutboxReader(relayKnex), publisher: new JetStreamEventPublisher(nc, link.stream) }),
    // The consumer's state is JetStream's: the pool is not needed.
    subscription: (_consumerKnex, durable) => new JetStreamEventSubscription(nc, link.stream, durable),
  });
  return {
    mode: 'nats',
    ready: link.ready.then((nc) => (nc ? channels(nc) : undefined)),
    feed: new NatsEventFeed(() => link.current(), config.natsSubjectPrefix, installationId),
    probes: [nats, eventsProbe('nats', () => nats.probe())],
    description: `JetStream stream ${config.natsStream} on ${redactNatsUrl(config.natsUrl)}`,
    summary: `events through NATS JetStream (stream ${config.natsStream} on ${redactNatsUrl(config.natsUrl)})`,
    windDown: () => link.windDown(),
    close: (abandon) => link.close(abandon),
  };
}

/** A process's link to NATS: connected in the background, the stream checked once it answers. */
export interface EventLink {
  readonly stream: StreamOptions;
  /** The connection once NATS answered and the stream proved ours; undefined before (or for ever, on a conflict). */
  current(): NatsConnection | undefined;
  /** Resolves with the connection once usable; with undefined when the stream is another installation's or the link closed. */
  readonly ready: Promise<NatsConnection | undefined>;
  /**
   * The first step of a stop: gives up what cannot finish. A connect still
   * being tried ends (`ready` resolves with undefined at once); a connection
   * whose server has gone is closed at once, so that a publish waiting on it
   * fails now rather than at its timeout (the relay's batch stays in the
   * outbox) and nothing waits for a server that may not come back. A
   * connection that has its server stays open, for the workers to finish with.
   */
  windDown(): void;
  /**
   * Gives up connecting and closes the connection: drained (pending
   * messages flushed) while NATS answers, closed at once while it does not,
   * or once `abandon` fires.
   */
  close(abandon?: AbortSignal): Promise<void>;
}

/** Start-up was stopped (SIGINT or SIGTERM) before it was done. */
export class StartCancelledError extends Error {
  override readonly name = 'StartCancelledError';
}

/** Longest wait for a drain when NATS answers; a drain on a connection that lost its server would wait for it to come back. */
const DRAIN_MS = 2000;
/** How long a process that waits for NATS as long as it takes waits before it says so. */
const WAIT_NOTICE_MS = 2000;

/**
 * Connects to NATS (retrying until it answers or the link is closed) and
 * makes sure the stream is this installation's. Start-up waits for NATS up to
 * waitMs (Infinity for a worker process, which has nothing to do without it;
 * `startSignal` ends that wait): when it answers in time, a stream of another
 * installation refuses the start. NATS answering later with such a stream is
 * logged, and the link is never ready, so events wait in the database.
 * @throws StartupError when the stream belongs to another installation and NATS answered within waitMs.
 * @throws StartCancelledError when `startSignal` fires before NATS answered.
 */
export async function linkNats(config: Config, natsUrl: string, installationId: string, name: string, waitMs: number, log: Log, startSignal?: AbortSignal): Promise<EventLink> {
  const stream = streamOptions(config, installationId);
  let closed = false;
  let nc: NatsConnection | undefined;
  let usable: NatsConnection | undefined;
  // Whether the connection has its server: a drain while it is reconnecting would wait for NATS to come back.
  let reachable = false;
  const giveUp = new AbortController();
  const connecting = connectNats(natsUrl, name, giveUp.signal);
  // Rejects only once given up; seen below, so never unhandled.
  connecting.catch(() => undefined);
  const onStartCancelled = () => giveUp.abort();
  if (startSignal?.aborted) onStartCancelled();
  else startSignal?.addEventListener('abort', onStartCancelled, { once: true });
  let timer: NodeJS.Timeout | undefined;
  // A process that waits for NATS as long as it takes says so, once it has waited a moment.
  const waiting = Number.isFinite(waitMs) ? undefined : setTimeout(() => log.warn(`Cannot reach NATS at ${redactNatsUrl(natsUrl)}; waiting for it (retried every 500 ms).`), WAIT_NOTICE_MS);
  let early: NatsConnection | undefined;
  try {
    early = await Promise.race([
      // A connection that fails outright (not merely late) is reported below, as a late one is.
      connecting.catch(() => undefined),
      ...(Number.isFinite(waitMs) ? [new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)))] : []),
    ]);
  } finally {
    clearTimeout(timer);
    clearTimeout(waiting);
    startSignal?.removeEventListener('abort', onStartCancelled);
  }
  if (startSignal?.aborted && !early) throw new StartCancelledError('stopped while waiting for NATS');
  const watch = (conn: NatsConnection) => {
    reachable = true;
    void (async () => {
      for await (const status of conn.status()) {
        if (status.type === 'disconnect') reachable = false;
        else if (status.type === 'reconnect') reachable = true;
      }
    })().catch(() => undefined);
  };
  let checked: Promise<'created' | 'owned' | 'adopted'> | undefined;
  if (early) {
    nc = early;
    watch(nc);
    checked = ensureStream(nc, stream);
    try {
      await checked;
    } catch (err) {
      if (err instanceof StreamConflictError) {
        await nc.close().catch(() => undefined);
        throw new StartupError(`${err.message} (NATS ${redactNatsUrl(natsUrl)})`);
      }
      // Any other failure is reported below, as when NATS comes late.
    }
  }
  const ready = (async (): Promise<NatsConnection | undefined> => {
    if (!nc) {
      log.warn(`Cannot reach NATS at ${redactNatsUrl(natsUrl)}; orders are accepted and their events will be published when it is back.`);
      // Undefined once the link gave up connecting (the process is stopping).
      const late = await connecting.catch(() => undefined);
      if (!late) return undefined;
      if (closed) {
        await late.close();
        return undefined;
      }
      nc = late;
      watch(nc);
    }
    try {
      const ownership = await (checked ?? ensureStream(nc, stream));
      if (ownership === 'adopted') log.info(`JetStream stream ${config.natsStream} named no installation (an earlier version made it); it is now installation ${installationId}'s.`);
    } catch (err) {
      if (!(err instanceof StreamConflictError)) throw err;
      // Too late to refuse the start: publish nothing to, and take nothing from, another installation's stream.
      log.error(`${err.message} Events of this installation stay in its database until it is restarted with names of its own.`);
      return undefined;
    }
    if (closed) return undefined;
    usable = nc;
    return nc;
  })().catch((err: unknown) => {
    if (closed) return undefined;
    log.error('NATS setup failed; events stay in the outbox', err);
    return undefined;
  });
  return {
    stream,
    current: () => usable,
    ready,
    windDown() {
      giveUp.abort();
      if (nc && !reachable && !nc.isClosed()) void nc.close().catch(() => undefined);
    },
    async close(abandon) {
      closed = true;
      giveUp.abort();
      const conn = nc;
      if (!conn || conn.isClosed()) return;
      if (reachable && !abandon?.aborted) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([
          conn.drain().catch(() => undefined),
          new Promise<void>((resolve) => {
            timer = setTimeout(resolve, DRAIN_MS);
            abandon?.addEventListener('abort', () => resolve(), { once: true });
          }),
        ]);
        clearTimeout(timer);
      }
      // Closing also ends the client's reconnect loop when NATS has gone away.
      if (!conn.isClosed()) await conn.close().catch(() => undefined);
    },
  };
}
