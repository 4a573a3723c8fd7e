import { ApplicationError } from '../../../kernel/application/application-error.ts';
import { create, type DescMessage, type MessageShape } from '@bufbuild/protobuf';
import { timestampDate, timestampFromDate } from '@bufbuild/protobuf/wkt';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import {
  CreateWebhookEndpointRequestSchema,
  CreateWebhookEndpointResponseSchema,
  DeleteWebhookEndpointRequestSchema,
  DeleteWebhookEndpointResponseSchema,
  GetWebhookEndpointResponseSchema,
  ListWebhookEndpointsResponseSchema,
  ReplayEventsRequestSchema,
  ReplayEventsResponseSchema,
  RotateWebhookSecretRequestSchema,
  RotateWebhookSecretResponseSchema,
  UpdateWebhookEndpointRequestSchema,
  UpdateWebhookEndpointResponseSchema,
  type WebhookEndpointService,
} from '../../../gen/checkout/v1/webhook_pb.ts';
import type { Scope } from '../../merchant/domain/caller.ts';
import { DomainError, invalid } from '../../../kernel/domain/domain-error.ts';
import { parseText } from '../../../kernel/domain/text.ts';
import { ENDPOINT_ID_PREFIX, MAX_ENDPOINTS_PER_MODE, parseEnabledEvents, parseEndpointUrl, type WebhookEndpoint } from '../domain/webhook-endpoint.entity.ts';
import type { AddressPolicy } from '../ports/address-policy.port.ts';
import type { Clock } from '../../../kernel/ports/clock.port.ts';
import type { IdGenerator } from '../../../kernel/ports/id-generator.port.ts';
import type { TransactionScope } from '../../../kernel/ports/unit-of-work.port.ts';
import type { EndpointChanges, WebhookEndpointRepository } from '../ports/webhook-endpoint-repository.port.ts';
import type { Authenticate } from '../../merchant/application/authenticate.ts';
import type { Idempotent } from '../../../kernel/application/idempotent.ts';
import { endpointToProto } from './webhook-mapper.ts';
import { SIGNING_SECRET_PREFIX, type SigningSecrets } from './signing-secrets.ts';

/** Default and longest overlap during which a rotated-out secret still signs. */
export const DEFAULT_ROTATION_OVERLAP_S = 24 * 3600;
export const MAX_ROTATION_OVERLAP_S = 7 * 24 * 3600;

/** What the endpoint service runs on. */
export interface WebhookEndpointServiceDeps {
  readonly authenticate: Authenticate;
  readonly endpoints: WebhookEndpointRepository;
  readonly ids: IdGenerator;
  readonly clock: Clock;
  /** Which hosts an endpoint URL may name, in both modes (the same policy the sender applies). */
  readonly addressPolicy: Pick<AddressPolicy, 'refuseHost'>;
  readonly idempotent: Idempotent;
  /** Seals new signing secrets (and opens one again for a repeated request). */
  readonly secrets: SigningSecrets;
}

/**
 * What an Idempotency-Key keeps of an answer that reveals a new secret: the secret's id in its
 * place, never the secret. A repeat reads the secret again, sealed where it is kept, and answers it.
 */
const SECRET_REFERENCE = 'secret_ref:';

/** Implements checkout.v1.WebhookEndpointService: endpoint CRUD, secret rotation, bulk replay. */
export function createWebhookEndpointService(deps: WebhookEndpointServiceDeps): ServiceImpl<typeof WebhookEndpointService> {
  /** Runs fn for the caller a secret key names. */
  const guard = async <T>(ctx: HandlerContext, fn: (scope: Scope) => Promise<T>): Promise<T> => fn(await deps.authenticate(ctx, 'secret'));
  /** A state-changing call: once per Idempotency-Key. */
  const keyed = <I extends DescMessage, O extends DescMessage>(
    ctx: HandlerContext,
    operation: string,
    input: I,
    request: MessageShape<I>,
    output: O,
    fn: (scope: Scope, tx: TransactionScope) => Promise<MessageShape<O>>,
  ) => guard(ctx, (scope) => deps.idempotent(ctx, scope, { operation, input, request, output }, (tx) => fn(scope, tx)));
  /**
   * A call whose answer reveals a new signing secret once: under an Idempotency-Key, the answer is
   * kept with the secret's id in place of the secret, and a repeat answers the same secret, opened again.
   */
  const revealing = <I extends DescMessage, O extends DescMessage>(
    ctx: HandlerContext,
    operation: string,
    input: I,
    request: MessageShape<I>,
    output: O,
    fn: (scope: Scope, tx: TransactionScope, reveal: (secretId: string) => void) => Promise<MessageShape<O>>,
  ) =>
    guard(ctx, (scope) => {
      let secretId = '';
      type Revealing = MessageShape<O> & { secret: string; endpoint?: { id: string } | undefined };
      const atRest = {
        keep: (response: MessageShape<O>) => ({ ...response, secret: `${SECRET_REFERENCE}${secretId}` }) as MessageShape<O>,
        restore: async (tx: TransactionScope, kept: MessageShape<O>) => {
          const { secret, endpoint } = kept as Revealing;
          const record = secret.startsWith(SECRET_REFERENCE) && endpoint ? await tx.endpoints.findSecret(endpoint.id, secret.slice(SECRET_REFERENCE.length)) : undefined;
          if (!record || !endpoint) throw new Error(`the secret a repeated ${operation} answers is gone`);
          return { ...kept, secret: deps.secrets.open([record], endpoint.id)[0]! } as MessageShape<O>;
        },
      };
      return deps.idempotent(ctx, scope, { operation, input, request, output, atRest }, (tx) =>
        fn(scope, tx, (id) => {
          secretId = id;
        }),
      );
    });
  const found = async (scope: Scope, id: string, endpoints: WebhookEndpointRepository = deps.endpoints): Promise<WebhookEndpoint> => {
    const endpoint = await endpoints.findById(scope, id);
    if (!endpoint) throw new ApplicationError('webhook.endpoint_not_found', `No such webhook endpoint: "${id}".`, 'id');
    return endpoint;
  };
  const refuseHost = (host: string) => deps.addressPolicy.refuseHost(host);
  const description = (text: string) => (text === '' ? '' : parseText(text, 'description', 'request.parameter_invalid', 500));

  return {
    createWebhookEndpoint: (req, ctx) =>
      revealing(ctx, 'webhook_endpoints.create', CreateWebhookEndpointRequestSchema, req, CreateWebhookEndpointResponseSchema, async (scope, tx, reveal) => {
        if (req.url === '') throw invalid('request.parameter_missing', 'url', 'url is required.');
        const endpoint: WebhookEndpoint = {
          id: deps.ids.newId(ENDPOINT_ID_PREFIX),
          merchantId: scope.merchantId,
          livemode: scope.livemode,
          url: parseEndpointUrl(req.url, scope.livemode, refuseHost),
          enabledEvents: parseEnabledEvents(req.enabledEvents.length ? req.enabledEvents : ['*']),
          description: description(req.description),
          disabledReason: null,
          isDefault: false,
          createdAt: deps.clock.now(),
        };
        const secret = deps.ids.newSecret(SIGNING_SECRET_PREFIX);
        const inserted = await tx.endpoints.insert(endpoint, deps.secrets.seal(secret, endpoint.id), MAX_ENDPOINTS_PER_MODE);
        if (inserted === 'limit_reached') {
          throw new DomainError(
            'webhook.endpoint_limit_reached',
            `This ${scope.livemode ? 'live' : 'test'} mode already has ${MAX_ENDPOINTS_PER_MODE} webhook endpoints, the most allowed (the default endpoint included). Delete one you no longer use, or subscribe an existing endpoint to more event types.`,
          );
        }
        reveal(inserted.secretId);
        return create(CreateWebhookEndpointResponseSchema, { endpoint: endpointToProto(endpoint), secret });
      }),
    getWebhookEndpoint: (req, ctx) => guard(ctx, async (scope) => create(GetWebhookEndpointResponseSchema, { endpoint: endpointToProto(await found(scope, req.id)) })),
    listWebhookEndpoints: (_req, ctx) =>
      guard(ctx, async (scope) => create(ListWebhookEndpointsResponseSchema, { endpoints: (await deps.endpoints.list(scope)).map(endpointToProto) })),
    updateWebhookEndpoint: (req, ctx) =>
      keyed(ctx, 'webhook_endpoints.update', UpdateWebhookEndpointRequestSchema, req, UpdateWebhookEndpointResponseSchema, async (scope, tx) => {
        const current = await found(scope, req.id, tx.endpoints);
        const changes: {
          -readonly [K in keyof EndpointChanges]: EndpointChanges[K];
        } = {};
        if (req.url !== undefined) changes.url = parseEndpointUrl(req.url, scope.livemode, refuseHost);
        if (req.updateEvents) changes.enabledEvents = parseEnabledEvents(req.enabledEvents);
        if (req.description !== undefined) changes.description = description(req.description);
        if (req.disabled === true) changes.disabledReason = 'by_merchant';
        else if (req.disabled === false || (current.disabledReason === 'no_url' && changes.url !== undefined)) changes.disabledReason = null;
        if (changes.disabledReason === null && (changes.url ?? current.url) === null) changes.disabledReason = 'no_url';
        const updated = await tx.endpoints.update(scope, req.id, changes);
        if (!updated) throw new ApplicationError('webhook.endpoint_not_found', `No such webhook endpoint: "${req.id}".`, 'id');
        return create(UpdateWebhookEndpointResponseSchema, { endpoint: endpointToProto(updated) });
      }),
    deleteWebhookEndpoint: (req, ctx) =>
      keyed(ctx, 'webhook_endpoints.delete', DeleteWebhookEndpointRequestSchema, req, DeleteWebhookEndpointResponseSchema, async (scope, tx) => {
        if ((await found(scope, req.id, tx.endpoints)).isDefault) {
          throw new DomainError(
            'webhook.default_endpoint',
            'The default endpoint holds the signing secret of the sandbox and of checkout listen, so it cannot be deleted; disable it instead (PATCH with {"disabled": true}) or clear nothing and leave it without a URL.',
            'id',
          );
        }
        if (!(await tx.endpoints.delete(scope, req.id))) throw new ApplicationError('webhook.endpoint_not_found', `No such webhook endpoint: "${req.id}".`, 'id');
        return create(DeleteWebhookEndpointResponseSchema, { id: req.id });
      }),
    rotateWebhookSecret: (req, ctx) =>
      revealing(ctx, 'webhook_endpoints.rotate_secret', RotateWebhookSecretRequestSchema, req, RotateWebhookSecretResponseSchema, async (scope, tx, reveal) => {
        const endpoint = await found(scope, req.id, tx.endpoints);
        const overlap = req.overlapSeconds === 0 ? DEFAULT_ROTATION_OVERLAP_S : req.overlapSeconds;
        if (overlap < 0 || overlap > MAX_ROTATION_OVERLAP_S) {
          throw invalid('webhook.overlap_invalid', 'overlap_seconds', `overlap_seconds must be from 1 to ${MAX_ROTATION_OVERLAP_S} (7 days).`);
        }
        const now = deps.clock.now();
        const retireAt = new Date(now.getTime() + overlap * 1000);
        const secret = deps.ids.newSecret(SIGNING_SECRET_PREFIX);
        reveal(await tx.endpoints.rotateSecret(endpoint.id, deps.secrets.seal(secret, endpoint.id), retireAt, now));
        return create(RotateWebhookSecretResponseSchema, { endpoint: endpointToProto(endpoint), secret, oldSecretExpiresAt: timestampFromDate(retireAt) });
      }),
    replayEvents: (req, ctx) =>
      keyed(ctx, 'webhook_endpoints.replay', ReplayEventsRequestSchema, req, ReplayEventsResponseSchema, async (scope, tx) => {
        const endpoint = await found(scope, req.endpointId, tx.endpoints);
        if (!req.since) throw invalid('request.parameter_missing', 'since', 'since is required: the time from which events are replayed.');
        const queued = await tx.deliveries.replaySince(scope, endpoint.id, timestampDate(req.since), deps.clock.now());
        return create(ReplayEventsResponseSchema, { queued });
      }),
  };
}
