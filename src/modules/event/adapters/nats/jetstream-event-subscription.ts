import { AckPolicy, DeliverPolicy, nanos, type NatsConnection } from 'nats';
import type { DomainEvent } from '../../domain/domain-event.ts';
import { eventFromJson } from '../../domain/event-json.ts';
import type { Scope } from '../../../merchant/domain/caller.ts';
import type { Consumption, EventFeed, EventSubscription, ReceivedEvent, Settlement } from '../../ports/event-subscription.port.ts';
import { ownerOf, StreamConflictError, type StreamOptions } from './jetstream.ts';
import { ServiceUnavailableError } from '../../../../kernel/ports/errors.ts';

/** An event read back from the envelope the publisher wrote, with the installation that published it. */
export interface EnvelopeContents {
  readonly event: DomainEvent;
  /** Undefined for events published before envelopes named their installation. */
  readonly installationId: string | undefined;
}

/** A message on the event subjects that is not an event envelope (published by hand, or by something else). */
export class UnreadableEnvelopeError extends Error {
  override readonly name = 'UnreadableEnvelopeError';
}

/**
 * Parses the JSON envelope the publisher wrote back into a domain event.
 * @throws UnreadableEnvelopeError when the bytes are not an event envelope.
 */
export function readEnvelope(bytes: Uint8Array): EnvelopeContents {
  let e: unknown;
  try {
    e = JSON.parse(new TextDecoder().decode(bytes));
  } catch (err) {
    throw new UnreadableEnvelopeError('the message is not JSON', { cause: err });
  }
  const installationId = (e as { installation_id?: unknown } | null)?.installation_id;
  if (installationId !== undefined && typeof installationId !== 'string') throw new UnreadableEnvelopeError('installation_id is not a string');
  try {
    return { installationId, event: eventFromJson(e) };
  } catch (err) {
    throw new UnreadableEnvelopeError(`the message lacks the fields of an event envelope (${(err as Error).message})`, { cause: err });
  }
}

/** Events handled at once by one consumer, unless told otherwise. */
const HANDLER_CONCURRENCY = 64;

/** Options of {@link JetStreamEventSubscription}. */
export interface JetStreamSubscriptionOptions {
  /** The consumer's ack wait (30 s when absent); applies when this creates the durable consumer, an existing one keeps its own. */
  readonly ackWaitMs?: number;
  /** Events handled at once, and pulled ahead at most (64 handled, 256 pulled when absent). */
  readonly maxInHand?: number;
}

/**
 * Durable JetStream pull consumer. The handler's settlement decides: handled
 * is acked, retry nak'ed with its delay, reject terminated (JetStream never
 * redelivers it to this consumer, and records a MSG_TERMINATED advisory). A
 * handler that throws gets a nak of 1 s; a message that is no event envelope
 * is terminated and reported.
 */
export class JetStreamEventSubscription implements EventSubscription {
  readonly #nc: NatsConnection;
  readonly #stream: StreamOptions;
  readonly #durable: string;
  readonly #ackWaitMs: number;
  readonly #maxInHand: number | undefined;

  constructor(nc: NatsConnection, stream: StreamOptions, durableName: string, options: JetStreamSubscriptionOptions = {}) {
    this.#nc = nc;
    this.#stream = stream;
    this.#durable = durableName;
    this.#ackWaitMs = options.ackWaitMs ?? 30_000;
    this.#maxInHand = options.maxInHand;
  }

  async consume(handler: (received: ReceivedEvent) => Promise<Settlement>, onError: (err: unknown) => void): Promise<Consumption> {
    const jsm = await this.#nc.jetstreamManager();
    try {
      const existing = await jsm.consumers.info(this.#stream.stream, this.#durable);
      const owner = ownerOf(existing.config.description);
      if (owner !== undefined && owner !== this.#stream.installationId) {
        throw new StreamConflictError(
          `The durable consumer ${this.#durable} of JetStream stream ${this.#stream.stream} belongs to installation ${owner}, not to this one (${this.#stream.installationId}). Set NATS_STREAM and NATS_SUBJECT_PREFIX to names of this installation's own.`,
        );
      }
    } catch (err) {
      if (err instanceof StreamConflictError) throw err;
      await jsm.consumers.add(this.#stream.stream, {
        durable_name: this.#durable,
        description: `${this.#durable} of installation ${this.#stream.installationId}`,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(this.#ackWaitMs),
        max_ack_pending: 1000,
        filter_subject: `${this.#stream.subjectPrefix}.>`,
      });
    }
    const consumer = await this.#nc.jetstream().consumers.get(this.#stream.stream, this.#durable);
    const messages = await consumer.consume({ max_messages: this.#maxInHand ?? 256 });
    const concurrency = this.#maxInHand ?? HANDLER_CONCURRENCY;
    // Up to `concurrency` events are handled at once; each is acked when its own handler is done.
    const inHand = new Set<Promise<void>>();
    const loop = (async () => {
      for await (const m of messages) {
        const work: Promise<void> = (async () => {
          let received: ReceivedEvent;
          try {
            received = { ...readEnvelope(m.data), deliveryCount: m.info.deliveryCount };
          } catch (err) {
            // It can never become readable: redelivering it would loop for ever.
            onError(new UnreadableEnvelopeError(`${(err as Error).message}; terminated (stream ${m.info.stream}, sequence ${m.seq}, subject ${m.subject})`, { cause: err }));
            m.term();
            return;
          }
          try {
            const settlement = await handler(received);
            // term() without a reason: NATS 2.9 does not understand "+TERM reason" and would redeliver.
            if (settlement.kind === 'handled') m.ack();
            else if (settlement.kind === 'retry') m.nak(settlement.delayMs);
            else m.term();
          } catch (err) {
            onError(err);
            try {
              m.nak(1000);
            } catch {
              // The connection is closed (a stop while NATS was gone): JetStream hands the event over again after ack_wait.
            }
          }
        })().finally(() => inHand.delete(work));
        inHand.add(work);
        if (inHand.size >= concurrency) await Promise.race(inHand);
      }
    })();
    return {
      async stop() {
        await messages.close().catch(() => undefined);
        await Promise.all(inHand);
        await loop.catch(() => undefined);
      },
    };
  }
}

/** A live tail over a plain NATS subscription, filtered to this installation, one merchant and one mode. */
export class NatsEventFeed implements EventFeed {
  readonly #nc: () => NatsConnection | undefined;
  readonly #subjectPrefix: string;
  readonly #installationId: string;

  constructor(nc: () => NatsConnection | undefined, subjectPrefix: string, installationId: string) {
    this.#nc = nc;
    this.#subjectPrefix = subjectPrefix;
    this.#installationId = installationId;
  }

  async tail(scope: Scope, onEvent: (event: DomainEvent) => void): Promise<{ close(): void }> {
    const nc = this.#nc();
    if (!nc) throw new ServiceUnavailableError('NATS is not connected yet; try again shortly.');
    const sub = nc.subscribe(`${this.#subjectPrefix}.>`, {
      callback: (err, msg) => {
        if (err) return;
        let contents: EnvelopeContents;
        try {
          contents = readEnvelope(msg.data);
        } catch {
          return;
        }
        // Another installation's event is never shown, even to a merchant id that happened to match.
        if (contents.installationId !== undefined && contents.installationId !== this.#installationId) return;
        const { event } = contents;
        if (event.merchantId === scope.merchantId && event.livemode === scope.livemode) onEvent(event);
      },
    });
    // Once flushed, the server has the subscription: every event published after this is seen.
    await nc.flush();
    return { close: () => sub.unsubscribe() };
  }
}
