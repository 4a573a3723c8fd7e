import { connect, nanos, RetentionPolicy, StorageType, type NatsConnection } from 'nats';

/** Where events go on NATS. */
export interface StreamOptions {
  /** JetStream stream name, e.g. CHECKOUT_EVENTS. */
  readonly stream: string;
  /** Subject prefix; an event of type order.created goes to `${prefix}.order.created`. */
  readonly subjectPrefix: string;
  /** Window in which JetStream drops a repeated msgID. */
  readonly duplicateWindowMs: number;
}

/** Connects to NATS, retrying for ever; resolves on the first successful connection. */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, waitOnFirstConnect: true, maxReconnectAttempts: -1, reconnectTimeWait: 500 });
}

/** Creates the event stream, or brings an existing one's subjects and duplicate window up to date. */
export async function ensureStream(nc: NatsConnection, options: StreamOptions): Promise<void> {
  const jsm = await nc.jetstreamManager();
  const config = {
    subjects: [`${options.subjectPrefix}.>`],
    duplicate_window: nanos(options.duplicateWindowMs),
  };
  try {
    await jsm.streams.info(options.stream);
    await jsm.streams.update(options.stream, config);
  } catch (err) {
    if (!/stream not found/i.test(String(err))) throw err;
    await jsm.streams.add({ name: options.stream, retention: RetentionPolicy.Limits, storage: StorageType.File, ...config });
  }
}
