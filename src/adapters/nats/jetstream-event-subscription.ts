import { AckPolicy, DeliverPolicy, nanos, type NatsConnection } from 'nats';
import type { DomainEvent, EventType } from '../../domain/event/domain-event.ts';
import type { Scope } from '../../domain/merchant/caller.ts';
import type { Consumption, EventFeed, EventSubscription } from '../../ports/event-subscription.port.ts';
import type { StreamOptions } from './jetstream.ts';
import { ServiceUnavailableError } from '../../ports/errors.ts';

/** Parses the JSON envelope the publisher wrote back into a domain event. */
export function eventFromEnvelope(bytes: Uint8Array): DomainEvent {
  const e = JSON.parse(new TextDecoder().decode(bytes)) as Record<string, unknown>;
  return {
    id: e.id as string,
    type: e.type as EventType,
    merchantId: e.merchant_id as string,
    livemode: e.livemode as boolean,
    orderId: e.order_id as string,
    reference: e.reference as string,
    sequence: e.sequence as number,
    createdAt: new Date(e.created as string),
    data: e.data as DomainEvent['data'],
  };
}

/** Events handled at once by one consumer. */
const HANDLER_CONCURRENCY = 64;

/**
 * Durable JetStream pull consumer: a message is acked after the handler
 * resolves and nak'ed (redelivered after a delay) when it throws.
 */
export class JetStreamEventSubscription implements EventSubscription {
  readonly #nc: NatsConnection;
  readonly #stream: StreamOptions;
  readonly #durable: string;

  constructor(nc: NatsConnection, stream: StreamOptions, durableName: string) {
    this.#nc = nc;
    this.#stream = stream;
    this.#durable = durableName;
  }

  async consume(handler: (event: DomainEvent) => Promise<void>, onError: (err: unknown) => void): Promise<Consumption> {
    const jsm = await this.#nc.jetstreamManager();
    try {
      await jsm.consumers.info(this.#stream.stream, this.#durable);
    } catch {
      await jsm.consumers.add(this.#stream.stream, {
        durable_name: this.#durable,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.All,
        ack_wait: nanos(30_000),
        max_ack_pending: 1000,
        filter_subject: `${this.#stream.subjectPrefix}.>`,
      });
    }
    const consumer = await this.#nc.jetstream().consumers.get(this.#stream.stream, this.#durable);
    const messages = await consumer.consume({ max_messages: 256 });
    // Up to HANDLER_CONCURRENCY events are handled at once; each is acked when its own handler is done.
    const inHand = new Set<Promise<void>>();
    const loop = (async () => {
      for await (const m of messages) {
        const work: Promise<void> = (async () => {
          try {
            await handler(eventFromEnvelope(m.data));
            m.ack();
          } catch (err) {
            onError(err);
            m.nak(1000);
          }
        })().finally(() => inHand.delete(work));
        inHand.add(work);
        if (inHand.size >= HANDLER_CONCURRENCY) await Promise.race(inHand);
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

/** A live tail over a plain NATS subscription, filtered to one merchant and mode. */
export class NatsEventFeed implements EventFeed {
  readonly #nc: () => NatsConnection | undefined;
  readonly #subjectPrefix: string;

  constructor(nc: () => NatsConnection | undefined, subjectPrefix: string) {
    this.#nc = nc;
    this.#subjectPrefix = subjectPrefix;
  }

  async tail(scope: Scope, onEvent: (event: DomainEvent) => void): Promise<{ close(): void }> {
    const nc = this.#nc();
    if (!nc) throw new ServiceUnavailableError('NATS is not connected yet; try again shortly.');
    const sub = nc.subscribe(`${this.#subjectPrefix}.>`, {
      callback: (err, msg) => {
        if (err) return;
        const event = eventFromEnvelope(msg.data);
        if (event.merchantId === scope.merchantId && event.livemode === scope.livemode) onEvent(event);
      },
    });
    // Once flushed, the server has the subscription: every event published after this is seen.
    await nc.flush();
    return { close: () => sub.unsubscribe() };
  }
}
