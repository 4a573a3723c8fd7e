import type { Knex } from 'knex';
import type { NatsConnection } from 'nats';
import type { Config, EventsMode } from '../config.ts';
import { connectNats, ensureStream, StreamConflictError, type StreamOptions } from '../adapters/nats/jetstream.ts';
import { JetStreamEventPublisher } from '../adapters/nats/jetstream-event-publisher.ts';
import { JetStreamEventSubscription, NatsEventFeed } from '../adapters/nats/jetstream-event-subscription.ts';
import { NatsDependencyProbe } from '../adapters/nats/nats-dependency-probe.ts';
import { PostgresOutboxReader } from '../adapters/postgres/event/postgres-event-outbox.ts';
import { PostgresEventNotifications } from '../adapters/postgres/event/postgres-event-notifications.ts';
import { PostgresEventSubscription } from '../adapters/postgres/event/postgres-event-subscription.ts';
import { PostgresEventFeed } from '../adapters/postgres/event/postgres-event-feed.ts';
import type { EventPublisher } from '../ports/event/event-publisher.port.ts';
import type { OutboxReader } from '../ports/event/event-outbox.port.ts';
import type { EventFeed, EventSubscription } from '../ports/event/event-subscription.port.ts';
import type { DependencyProbe } from '../ports/health/dependency-probe.port.ts';
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
  close(): Promise<void>;
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
 * NATS (see {@link linkNats}; start-up waits for it up to waitMs). Without:
 * the event stream in Postgres, usable at once, with one LISTEN connection
 * for the process's wake-ups.
 * @throws StartupError when the JetStream stream belongs to another installation and NATS answered within waitMs.
 */
export async function linkEvents(config: Config, installationId: string, knex: Knex, name: string, waitMs: number, log: Log): Promise<EventTransport> {
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
      close: () => notifications.close(),
    };
  }
  const link = await linkNats(config, config.natsUrl, installationId, name, waitMs, log);
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
    close: () => link.close(),
  };
}

/** A process's link to NATS: connected in the background, the stream checked once it answers. */
export interface EventLink {
  readonly stream: StreamOptions;
  /** The connection once NATS answered and the stream proved ours; undefined before (or for ever, on a conflict). */
  current(): NatsConnection | undefined;
  /** Resolves with the connection once usable; with undefined when the stream is another installation's or the link closed. */
  readonly ready: Promise<NatsConnection | undefined>;
  close(): Promise<void>;
}

/**
 * Connects to NATS (retrying for ever) and makes sure the stream is this
 * installation's. Start-up waits for NATS up to waitMs (Infinity for a worker
 * process, which has nothing to do without it): when it answers in time, a
 * stream of another installation refuses the start. NATS answering later
 * with such a stream is logged, and the link is never ready, so events wait
 * in the database.
 * @throws StartupError when the stream belongs to another installation and NATS answered within waitMs.
 */
export async function linkNats(config: Config, natsUrl: string, installationId: string, name: string, waitMs: number, log: Log): Promise<EventLink> {
  const stream = streamOptions(config, installationId);
  let closed = false;
  let nc: NatsConnection | undefined;
  let usable: NatsConnection | undefined;
  const connecting = connectNats(natsUrl, name);
  let timer: NodeJS.Timeout | undefined;
  const early = await Promise.race([
    // A connection that fails outright (not merely late) is reported below, as a late one is.
    connecting.catch(() => undefined),
    ...(Number.isFinite(waitMs) ? [new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), waitMs)))] : []),
  ]);
  clearTimeout(timer);
  let checked: Promise<'created' | 'owned' | 'adopted'> | undefined;
  if (early) {
    nc = early;
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
      const late = await connecting;
      if (closed) {
        await late.close();
        return undefined;
      }
      nc = late;
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
    log.error('NATS setup failed; events stay in the outbox', err);
    return undefined;
  });
  return {
    stream,
    current: () => usable,
    ready,
    async close() {
      closed = true;
      if (nc) await nc.drain().catch(() => undefined);
    },
  };
}
