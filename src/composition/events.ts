import type { NatsConnection } from 'nats';
import type { Config } from '../config.ts';
import { connectNats, ensureStream, StreamConflictError, type StreamOptions } from '../adapters/nats/jetstream.ts';
import type { Log } from './log.ts';
import { StartupError } from './startup.ts';

/** The stream options of this installation, from the configuration and the installation id in its database. */
export function streamOptions(config: Pick<Config, 'natsStream' | 'natsSubjectPrefix'> & Partial<Pick<Config, 'natsStreamReplicas'>>, installationId: string): StreamOptions {
  return { stream: config.natsStream, subjectPrefix: config.natsSubjectPrefix, duplicateWindowMs: 10 * 60_000, installationId, replicas: config.natsStreamReplicas ?? 1 };
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
export async function linkEvents(config: Config, installationId: string, name: string, waitMs: number, log: Log): Promise<EventLink> {
  const stream = streamOptions(config, installationId);
  let closed = false;
  let nc: NatsConnection | undefined;
  let usable: NatsConnection | undefined;
  const connecting = connectNats(config.natsUrl, name);
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
        throw new StartupError(`${err.message} (NATS ${config.natsUrl})`);
      }
      // Any other failure is reported below, as when NATS comes late.
    }
  }
  const ready = (async (): Promise<NatsConnection | undefined> => {
    if (!nc) {
      log.warn(`Cannot reach NATS at ${config.natsUrl}; orders are accepted and their events will be published when it is back.`);
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
