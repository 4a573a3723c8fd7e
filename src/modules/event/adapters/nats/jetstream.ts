import { setTimeout as sleep } from 'node:timers/promises';
import { connect, nanos, RetentionPolicy, StorageType, type JetStreamManager, type NatsConnection, type StreamInfo } from 'nats';

/** Where events go on NATS, and whose they are. */
export interface StreamOptions {
  /** JetStream stream name, e.g. CHECKOUT_EVENTS. */
  readonly stream: string;
  /** Subject prefix; an event of type order.created goes to `${prefix}.order.created`. */
  readonly subjectPrefix: string;
  /** Window in which JetStream drops a repeated msgID. */
  readonly duplicateWindowMs: number;
  /** The installation (`ins_…`, from the database) that owns the stream and publishes its events. */
  readonly installationId: string;
  /** Copies of the stream a JetStream cluster keeps (1 when absent; at most the number of servers). */
  readonly replicas?: number;
}

/** The servers of a NATS_URL: one URL, or a comma list of a cluster's. */
export function natsServers(url: string): string[] {
  return url.split(',').map((server) => server.trim()).filter(Boolean);
}

/** Pause between two attempts to reach NATS before it first answers (and between reconnects afterwards). */
const RETRY_MS = 500;

/**
 * Connects to NATS, retrying every 500 ms until it answers or `signal` fires;
 * resolves on the first successful connection, after which the client
 * reconnects on its own for as long as the connection is open.
 * `url` may list a cluster's servers, comma-separated: the client connects to one and,
 * when it goes, reconnects to another (and learns the rest of the cluster from the server).
 *
 * The retrying is ours rather than the client's (`waitOnFirstConnect`), which
 * would retry for ever with nothing to stop it: a process told to stop while
 * NATS was unreachable could not end.
 * @throws the signal's reason (an AbortError) once `signal` fires; a connection that completes after it is closed.
 */
export async function connectNats(url: string, name: string, signal?: AbortSignal): Promise<NatsConnection> {
  // noAsyncTraces: without it every request (each JetStream publish) captures two stack traces in advance,
  // for an error that almost never comes: 3% of the server's CPU creating orders.
  const options = { servers: natsServers(url), name, maxReconnectAttempts: -1, reconnectTimeWait: RETRY_MS, noAsyncTraces: true };
  for (;;) {
    signal?.throwIfAborted();
    // One round over the servers: it fails once none of them answers.
    const attempt = connect(options);
    try {
      return await untilAborted(attempt, signal);
    } catch {
      if (signal?.aborted) {
        // Too late for the caller: a connection that comes now is not left open behind it.
        void attempt.then((nc) => nc.close(), () => undefined);
        throw signal.reason;
      }
      // None answered: tried again after the pause.
    }
    await sleep(RETRY_MS, undefined, { signal });
  }
}

/** The promise's outcome, or the signal's reason once it fires first. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The stream cannot be this installation's: it belongs to another one, or its
 * subjects overlap another stream's. The message says what to change.
 */
export class StreamConflictError extends Error {
  override readonly name = 'StreamConflictError';
}

// The owner is written into the stream's description rather than its metadata: metadata needs
// NATS 2.10, and the description works on every JetStream server (and shows in `nats stream info`).
const OWNER = /\binstallation (ins_[0-9A-Za-z]+)\b/;

/** The description that marks a stream as owned by an installation. */
export function streamDescription(installationId: string): string {
  return `Checkout events of installation ${installationId}`;
}

/** The installation named in a stream's or consumer's description, if any. */
export function ownerOf(description: string | undefined): string | undefined {
  return description?.match(OWNER)?.[1];
}

/** What {@link ensureStream} found: a new stream, one already ours, or one of an earlier version now ours. */
export type StreamOwnership = 'created' | 'owned' | 'adopted';

const CHANGE_NAMES = 'set NATS_STREAM and NATS_SUBJECT_PREFIX to names of its own for this installation (e.g. NATS_STREAM=CHECKOUT_EVENTS_2 NATS_SUBJECT_PREFIX=checkout2.events); JetStream refuses two streams with overlapping subjects, so both must change';

/**
 * Creates the event stream, marked with this installation's id, or brings an
 * existing one's subjects and duplicate window up to date. A stream with no
 * owner (made by an earlier version) is adopted by the first installation
 * that starts.
 * @throws StreamConflictError when the stream belongs to another installation or its subjects overlap another stream's.
 */
export async function ensureStream(nc: NatsConnection, options: StreamOptions): Promise<StreamOwnership> {
  const jsm = await nc.jetstreamManager();
  const config = {
    subjects: [`${options.subjectPrefix}.>`],
    duplicate_window: nanos(options.duplicateWindowMs),
    description: streamDescription(options.installationId),
    // On a cluster, 3 copies keep the stream (and its duplicate window) through the loss of a server.
    num_replicas: options.replicas ?? 1,
  };
  let info = await streamInfo(jsm, options.stream);
  if (!info) {
    try {
      await jsm.streams.add({ name: options.stream, retention: RetentionPolicy.Limits, storage: StorageType.File, ...config });
      return 'created';
    } catch (err) {
      overlapCheck(err, options);
      // Another process created it a moment ago (e.g. `checkout dispatch` starting beside `serve`): check whose it is.
      if (!/already in use/i.test(String(err))) throw err;
      info = await streamInfo(jsm, options.stream);
      if (!info) throw err;
    }
  }
  const owner = ownerOf(info.config.description);
  if (owner !== undefined && owner !== options.installationId) {
    throw new StreamConflictError(
      `JetStream stream ${options.stream} belongs to installation ${owner}, not to this one (${options.installationId}, from its database): ` +
        `two installations on one NATS server would take each other's events. To run both, ${CHANGE_NAMES}.`,
    );
  }
  try {
    await jsm.streams.update(options.stream, config);
  } catch (err) {
    overlapCheck(err, options);
    throw err;
  }
  return owner === undefined ? 'adopted' : 'owned';
}

async function streamInfo(jsm: JetStreamManager, stream: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(stream);
  } catch (err) {
    if (/stream not found/i.test(String(err))) return undefined;
    throw err;
  }
}

function overlapCheck(err: unknown, options: StreamOptions): void {
  if (/subjects overlap/i.test(String(err))) {
    throw new StreamConflictError(
      `The subjects ${options.subjectPrefix}.> of JetStream stream ${options.stream} overlap another stream's (another installation's, or one made by hand). To run beside it, ${CHANGE_NAMES}.`,
      { cause: err },
    );
  }
}
