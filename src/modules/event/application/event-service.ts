import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { create } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import {
  GetEventResponseSchema,
  ListDeliveryAttemptsResponseSchema,
  ListEventsResponseSchema,
  ListenEventsResponseSchema,
  RedeliverEventRequestSchema,
  RedeliverEventResponseSchema,
  type EventService,
  type ListenEventsResponse,
} from '../../../gen/checkout/v1/webhook_pb.ts';
import type { DomainEvent } from '../domain/domain-event.ts';
import type { Caller, Scope } from '../../merchant/domain/caller.ts';
import { webhookBody } from '../../webhook/domain/webhook-body.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { EventLog } from '../ports/event-log.port.ts';
import type { EventFeed } from '../ports/event-subscription.port.ts';
import type { WebhookDeliveryQueue } from '../../webhook/ports/webhook-delivery-queue.port.ts';
import type { WebhookEndpointRepository } from '../../webhook/ports/webhook-endpoint-repository.port.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import { DEFAULT_LIST_LIMIT, MAX_LIST_LIMIT } from '../../order/application/list-orders.ts';
import { attemptToProto, eventToProto } from '../../webhook/application/webhook-mapper.ts';
import type { SigningSecrets } from '../../webhook/application/signing-secrets.ts';

/** What the event service runs on. */
export interface EventServiceDeps {
  readonly authenticate: Authenticate;
  readonly events: EventLog;
  readonly queue: WebhookDeliveryQueue;
  readonly endpoints: WebhookEndpointRepository;
  /** Opens the default endpoint's signing secret for `checkout listen`. */
  readonly secrets: Pick<SigningSecrets, 'open'>;
  readonly feed: EventFeed;
  readonly clock: Clock;
  readonly idempotent: Idempotent;
  /** Bounds of `checkout listen` (ListenEvents); the defaults when absent. */
  readonly listen?: Partial<ListenLimits>;
}

/** Bounds of the live tail, ListenEvents (docs/webhooks.md#checkout-listen). */
export interface ListenLimits {
  /** Events kept for a client that is not reading; one more ends its stream with resource_exhausted / listen_fell_behind. */
  readonly maxBuffered: number;
  /** Streams one merchant may hold open at once in this process; one more is refused with resource_exhausted / too_many_listens. */
  readonly maxPerMerchant: number;
}

/** The default {@link ListenLimits}. */
export const DEFAULT_LISTEN_LIMITS: ListenLimits = { maxBuffered: 1000, maxPerMerchant: 5 };

/** Implements checkout.v1.EventService: the event log, its deliveries, redelivery and the live tail. */
export function createEventService(deps: EventServiceDeps): ServiceImpl<typeof EventService> {
  const caller = (ctx: HandlerContext): Promise<Caller> => deps.authenticate(ctx, 'secret');
  const limits: ListenLimits = { ...DEFAULT_LISTEN_LIMITS, ...deps.listen };
  /** Open ListenEvents streams per merchant (and mode), in this process. */
  const listening = new Map<string, number>();
  /** Runs fn for the caller a secret key names. */
  const guard = async <T>(ctx: HandlerContext, fn: (scope: Scope) => Promise<T>): Promise<T> => fn(await caller(ctx));
  const found = async (scope: Scope, id: string) => {
    const event = await deps.events.findById(scope, id);
    if (!event) throw new ApplicationError('event.not_found', `No such event: "${id}".`, 'id');
    return event;
  };

  return {
    listEvents: (req, ctx) =>
      guard(ctx, async (scope) => {
        const limit = req.limit === 0 ? DEFAULT_LIST_LIMIT : req.limit;
        if (limit < 1 || limit > MAX_LIST_LIMIT) throw new ApplicationError('list.limit_invalid', `limit must be an integer from 1 to ${MAX_LIST_LIMIT}.`, 'limit');
        const page = await deps.events.list(scope, { limit, startingAfter: req.startingAfter, type: req.type, orderId: req.orderId, reference: req.reference });
        return create(ListEventsResponseSchema, { events: page.events.map(eventToProto), hasMore: page.hasMore });
      }),
    getEvent: (req, ctx) => guard(ctx, async (scope) => create(GetEventResponseSchema, { event: eventToProto(await found(scope, req.id)) })),
    listDeliveryAttempts: (req, ctx) =>
      guard(ctx, async (scope) => {
        await found(scope, req.eventId);
        return create(ListDeliveryAttemptsResponseSchema, { attempts: (await deps.queue.listAttempts(scope, req.eventId)).map(attemptToProto) });
      }),
    redeliverEvent: (req, ctx) =>
      guard(ctx, async (scope) => {
        // Read before the transaction opens: the event log is not part of it (events are never changed).
        await found(scope, req.eventId);
        const call = { operation: 'events.redeliver', input: RedeliverEventRequestSchema, request: req, output: RedeliverEventResponseSchema };
        return deps.idempotent(ctx, scope, call, async (tx) => {
          if (req.endpointId && !(await tx.endpoints.findById(scope, req.endpointId))) {
            throw new ApplicationError('webhook.endpoint_not_found', `No such webhook endpoint: "${req.endpointId}".`, 'endpoint_id');
          }
          const queued = await tx.deliveries.requeueEvent(scope, req.eventId, req.endpointId || undefined, deps.clock.now());
          return create(RedeliverEventResponseSchema, { queued });
        });
      }),
    async *listenEvents(_req, ctx): AsyncGenerator<ListenEventsResponse> {
      const scope: Caller = await caller(ctx);
      if (scope.livemode) throw new ApplicationError('listen.live_mode', 'checkout listen works with test keys only (sk_test_…).');
      const slot = `${scope.merchantId}:${scope.livemode}`;
      const open = listening.get(slot) ?? 0;
      if (open >= limits.maxPerMerchant) {
        throw new ApplicationError(
          'listen.too_many',
          `This merchant already has ${open} checkout listen streams open, the most allowed at once; stop one (or wait for it to end) before starting another.`,
        );
      }
      listening.set(slot, open + 1);
      try {
        yield* tail(scope, ctx);
      } finally {
        const left = (listening.get(slot) ?? 1) - 1;
        if (left > 0) listening.set(slot, left);
        else listening.delete(slot);
      }
    },
  };

  /**
   * The stream of one listen: the signing secret, then every event of the scope as it happens. Events wait in a
   * buffer while the client is not reading, up to limits.maxBuffered: past that the feed is closed and the stream
   * ends with listen.fell_behind, so a client that stops reading cannot make the service hold its events without end.
   */
  async function* tail(scope: Caller, ctx: HandlerContext): AsyncGenerator<ListenEventsResponse> {
    const buffered: DomainEvent[] = [];
    let notify: (() => void) | undefined;
    let fellBehind = false;
    const endpoint = await deps.endpoints.findDefault(scope);
    const secret = (endpoint ? deps.secrets.open((await deps.endpoints.activeSecrets(endpoint.id, deps.clock.now())).slice(0, 1), endpoint.id) : [])[0] ?? '';
    // The feed may call back before tail() has answered: closed there when it is known, here otherwise.
    const opened: { feed?: { close(): void } } = {};
    const feed = await deps.feed.tail(scope, (event) => {
      if (fellBehind) return;
      if (buffered.length >= limits.maxBuffered) {
        fellBehind = true;
        buffered.length = 0;
        opened.feed?.close();
      } else {
        buffered.push(event);
      }
      notify?.();
    });
    opened.feed = feed;
    if (fellBehind) feed.close();
    // One abort listener for the whole stream: it wakes the wait below when the client goes away.
    const onAbort = () => notify?.();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      yield create(ListenEventsResponseSchema, { signingSecret: secret });
      while (!ctx.signal.aborted) {
        if (fellBehind) {
          throw new ApplicationError(
            'listen.fell_behind',
            `checkout listen fell more than ${limits.maxBuffered} events behind (the client stopped reading), so the stream was ended. ` +
              'Start it again; the events it did not forward are in the event log (GET /v1/events), and can be redelivered from there.',
          );
        }
        const event = buffered.shift();
        if (event) {
          yield create(ListenEventsResponseSchema, { body: webhookBody(event), eventId: event.id, type: event.type });
          continue;
        }
        await new Promise<void>((resolve) => {
          notify = resolve;
        });
        notify = undefined;
      }
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
      feed.close();
    }
  }
}
