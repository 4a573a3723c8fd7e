import pg from 'pg';
import { EVENT_STREAM_CHANNEL } from './postgres-event-outbox.ts';

/** Options of {@link PostgresEventNotifications}. */
export interface PostgresEventNotificationsOptions {
  /** First pause before connecting again after the LISTEN connection failed; it doubles up to 10 s. */
  readonly retryMs?: number;
  /** Told when the LISTEN connection fails or cannot be opened (the consumers keep polling meanwhile). */
  readonly onError?: (err: unknown) => void;
  /** Longest wait for Postgres to accept the LISTEN connection (5 s unless given). */
  readonly connectTimeoutMs?: number;
}

/**
 * Wake-ups of the event stream in Postgres: one connection per process that
 * LISTENs on the stream's channel, shared by every consumer and live tail of
 * the process. The relay notifies when it commits a batch to the stream.
 *
 * Only a hint: the consumers also poll, so a notification that is lost (the
 * connection dropped, or a pooler in transaction mode in front of Postgres,
 * which cannot carry LISTEN) delays events by a poll interval, no more. The
 * connection is opened with the first subscriber, closed with the last, and
 * opened again after a failure while anyone subscribes; each (re)connection
 * wakes every subscriber, since notifications may have been missed.
 */
export class PostgresEventNotifications {
  readonly #url: string;
  readonly #retryMs: number;
  readonly #onError: (err: unknown) => void;
  readonly #connectTimeoutMs: number;
  readonly #subscribers = new Set<() => void>();
  #client: pg.Client | undefined;
  /** The client being connected, and those being ended: what close() cuts when it may not wait for them. */
  #opening: pg.Client | undefined;
  readonly #ending = new Set<pg.Client>();
  #connecting: Promise<void> | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #failures = 0;

  /** `url` is the database's connection string: the LISTEN connection is a connection of its own, outside any pool. */
  constructor(url: string, options: PostgresEventNotificationsOptions = {}) {
    this.#url = url;
    this.#retryMs = options.retryMs ?? 500;
    this.#onError = options.onError ?? (() => undefined);
    this.#connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  }

  /** Calls `wake` on each notification until the returned function is called. */
  subscribe(wake: () => void): () => void {
    this.#subscribers.add(wake);
    this.#ensureConnected();
    return () => {
      this.#subscribers.delete(wake);
      if (this.#subscribers.size === 0) void this.#disconnect();
    };
  }

  /** Resolves once the LISTEN connection is open (for tests that must not race its start). */
  async listening(): Promise<boolean> {
    await this.#connecting;
    return this.#client !== undefined;
  }

  /**
   * Drops every subscriber and closes the connection. An attempt to connect
   * still under way is cut at once: nobody is left to wake, and a Postgres
   * that does not answer would hold it for the connect timeout. Once
   * `abandon` fires (a stop whose grace is nearly spent), the connection is
   * cut rather than ended with a goodbye that a Postgres that hangs never
   * answers, and nothing more is waited for.
   */
  async close(abandon?: AbortSignal): Promise<void> {
    this.#subscribers.clear();
    this.#opening?.connection.stream.destroy();
    if (!abandon) return this.#disconnect();
    await new Promise<void>((resolve) => {
      const cut = () => {
        for (const client of [this.#client, ...this.#ending]) client?.connection.stream.destroy();
        resolve();
      };
      if (abandon.aborted) cut();
      else abandon.addEventListener('abort', cut, { once: true });
      void this.#disconnect().finally(() => {
        abandon.removeEventListener('abort', cut);
        resolve();
      });
    });
  }

  #wakeAll(): void {
    for (const wake of this.#subscribers) wake();
  }

  #ensureConnected(): void {
    if (this.#client || this.#connecting || this.#retryTimer || this.#subscribers.size === 0) return;
    this.#connecting = this.#connect().finally(() => {
      this.#connecting = undefined;
    });
  }

  async #connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#url, connectionTimeoutMillis: this.#connectTimeoutMs, keepAlive: true });
    const lost = (err: unknown) => {
      if (this.#client !== client) return;
      this.#client = undefined;
      // Cut by close(): nobody listens any more, so nothing is lost.
      if (this.#subscribers.size > 0) this.#onError(err);
      client.end().catch(() => undefined);
      this.#retryLater();
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('the LISTEN connection to Postgres ended')));
    client.on('notification', () => this.#wakeAll());
    this.#opening = client;
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENT_STREAM_CHANNEL}`);
    } catch (err) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      // Cut by close(), or nobody left to listen for: not a failure to report.
      if (this.#subscribers.size > 0) this.#onError(err);
      this.#retryLater();
      return;
    } finally {
      this.#opening = undefined;
    }
    if (this.#subscribers.size === 0) {
      await this.#end(client);
      return;
    }
    this.#client = client;
    this.#failures = 0;
    // What was notified while no connection listened is found by looking now.
    this.#wakeAll();
  }

  #retryLater(): void {
    if (this.#subscribers.size === 0 || this.#retryTimer) return;
    this.#failures += 1;
    const delay = Math.min(10_000, this.#retryMs * 2 ** Math.min(this.#failures - 1, 5));
    this.#retryTimer = setTimeout(() => {
      this.#retryTimer = undefined;
      this.#ensureConnected();
    }, delay);
    this.#retryTimer.unref();
  }

  async #disconnect(): Promise<void> {
    clearTimeout(this.#retryTimer);
    this.#retryTimer = undefined;
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    if (client) await this.#end(client);
  }

  /** Ends a connection with a goodbye; close() cuts it should it be abandoned meanwhile. */
  async #end(client: pg.Client): Promise<void> {
    client.removeAllListeners('end');
    this.#ending.add(client);
    try {
      await client.end().catch(() => undefined);
    } finally {
      this.#ending.delete(client);
    }
  }
}
