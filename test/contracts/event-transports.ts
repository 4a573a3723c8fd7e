// The two transports of the event ports, as the contract suites run them: JetStream (the machine's
// NATS at TEST_NATS_URL, a stream of the test's own) and the event stream in Postgres (no NATS).
// Each gets a database of its own; events are committed to its outbox and moved by the real relay
// with that transport's reader and publisher, as `checkout serve` would.
import { randomBytes } from 'node:crypto';
import type { NatsConnection } from 'nats';
import { createDatabase } from '../../src/kernel/adapters/postgres/database.ts';
import { PostgresEventOutbox, PostgresOutboxReader } from '../../src/modules/event/adapters/postgres/postgres-event-outbox.ts';
import { PostgresEventNotifications } from '../../src/modules/event/adapters/postgres/postgres-event-notifications.ts';
import { PostgresEventSubscription } from '../../src/modules/event/adapters/postgres/postgres-event-subscription.ts';
import { PostgresEventFeed } from '../../src/modules/event/adapters/postgres/postgres-event-feed.ts';
import { connectNats, ensureStream, type StreamOptions } from '../../src/modules/event/adapters/nats/jetstream.ts';
import { JetStreamEventPublisher } from '../../src/modules/event/adapters/nats/jetstream-event-publisher.ts';
import { JetStreamEventSubscription, NatsEventFeed } from '../../src/modules/event/adapters/nats/jetstream-event-subscription.ts';
import { createOutboxRelay } from '../../src/modules/event/application/relay-outbox.ts';
import type { DomainEvent, EventType } from '../../src/modules/event/domain/domain-event.ts';
import type { EventFeed, EventSubscription } from '../../src/modules/event/ports/event-subscription.port.ts';
import { createTestDatabase, type TestDatabase } from '../support/database.ts';
import { MACHINE_NATS_URL, uniqueStream } from '../support/nats-server.ts';

/** The transports every event port has an adapter for. */
export const TRANSPORTS = ['jetstream', 'postgres-outbox'] as const;
export type TransportKind = (typeof TRANSPORTS)[number];

/** Where a transport's adapters find their database and stream (what a child process is handed, as JSON). */
export interface TransportPlace {
  readonly kind: TransportKind;
  readonly databaseUrl: string;
  readonly natsUrl: string;
  readonly stream: StreamOptions;
}

/** Options a test gives a subscription. */
export interface SubscriptionOptions {
  readonly ackWaitMs?: number;
  readonly maxInHand?: number;
}

/** A subscription on connections of its own, as a process of its own would have. */
export interface OwnSubscription {
  readonly subscription: EventSubscription;
  /** Closes its connections (after the consumption stopped). */
  close(): Promise<void>;
}

/**
 * Opens a subscription with a durable name on connections of its own: the JetStream consumer or the
 * Postgres consumer, each as the dispatcher's worker builds it.
 */
export async function openSubscription(place: TransportPlace, durable: string, options: SubscriptionOptions = {}): Promise<OwnSubscription> {
  if (place.kind === 'jetstream') {
    const nc = await connectNats(place.natsUrl, `contract-${durable}`);
    return { subscription: new JetStreamEventSubscription(nc, place.stream, durable, options), close: () => nc.close() };
  }
  const knex = createDatabase({ url: place.databaseUrl, poolMax: 4 });
  const notifications = new PostgresEventNotifications(place.databaseUrl);
  return {
    subscription: new PostgresEventSubscription(knex, durable, { installationId: place.stream.installationId, notifications, ...options }),
    async close() {
      await notifications.close();
      await knex.destroy();
    },
  };
}

/** One transport, set up for a test file. */
export interface Transport {
  readonly kind: TransportKind;
  readonly place: TransportPlace;
  readonly db: TestDatabase;
  /** Commits the events to the outbox and relays them (resolves once the relay has published every one). */
  publish(events: readonly DomainEvent[]): Promise<void>;
  /** A live feed as `checkout serve` builds it. */
  feed(): EventFeed;
  close(): Promise<void>;
}

/** Sets up a transport on a fresh database (and, for JetStream, a fresh stream on the machine's NATS). */
export async function openTransport(kind: TransportKind): Promise<Transport> {
  const db = await createTestDatabase();
  const stream = uniqueStream();
  const place: TransportPlace = { kind, databaseUrl: db.url, natsUrl: MACHINE_NATS_URL, stream };
  let nc: NatsConnection | undefined;
  let notifications: PostgresEventNotifications | undefined;
  if (kind === 'jetstream') {
    nc = await connectNats(MACHINE_NATS_URL, 'contract-publisher');
    await ensureStream(nc, stream);
  } else {
    notifications = new PostgresEventNotifications(db.url);
  }
  const relay = createOutboxRelay({
    reader: new PostgresOutboxReader(db.knex, { appendToStream: kind === 'postgres-outbox' }),
    publisher: nc ? new JetStreamEventPublisher(nc, stream) : undefined,
    batchSize: 256,
    idleMs: 20,
    maxBackoffMs: 250,
    onError: (err) => {
      throw err;
    },
  });
  return {
    kind,
    place,
    db,
    async publish(events) {
      const outbox = new PostgresEventOutbox(db.knex);
      for (const event of events) await outbox.append(event);
      while ((await relay.relayOnce()) > 0);
    },
    feed: () => (nc ? new NatsEventFeed(() => nc, stream.subjectPrefix, stream.installationId) : new PostgresEventFeed(db.knex, { notifications })),
    async close() {
      await notifications?.close();
      if (nc) {
        const jsm = await nc.jetstreamManager();
        await jsm.streams.delete(stream.stream).catch(() => undefined);
        await nc.close();
      }
      await db.drop();
    },
  };
}

let made = 0;

/** An event about an order of its own (override any field). */
export function anEvent(overrides: Partial<DomainEvent> & { type?: EventType } = {}): DomainEvent {
  made += 1;
  const orderId = `ord_contract${randomBytes(6).toString('hex')}`;
  const reference = `CONTRACT-${made}`;
  return {
    id: `evt_contract${randomBytes(8).toString('hex')}`,
    type: 'order.created',
    merchantId: 'mer_contract',
    livemode: false,
    subject: { type: 'order', id: orderId },
    orderId,
    reference,
    sequence: 1,
    createdAt: new Date(),
    data: { id: orderId, reference, amount: 2500, currency: 'EUR' },
    ...overrides,
  };
}
