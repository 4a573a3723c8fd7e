import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { OrderService } from '../../src/gen/checkout/v1/order_pb.ts';
import { TestHelperService } from '../../src/gen/checkout/v1/test_helpers_pb.ts';
import { EventService, WebhookEndpointService } from '../../src/gen/checkout/v1/webhook_pb.ts';
import { coreCall, returnCoreHeaders } from './shared/core-call.ts';
import { RestError } from './shared/rest-error.ts';
import { toParamError, type SchemaError } from './shared/validation.ts';
import { describeRestApi } from './shared/openapi.ts';
import { ORDER_SCHEMAS } from './orders/schemas.ts';
import { registerOrderRoutes } from './orders/routes.ts';
import { registerTestHelperRoutes } from './test-helpers/routes.ts';
import { ENDPOINT_SCHEMAS } from './webhook-endpoints/schemas.ts';
import { registerWebhookEndpointRoutes } from './webhook-endpoints/routes.ts';
import { EVENT_SCHEMAS } from './events/schemas.ts';
import { registerEventRoutes } from './events/routes.ts';

/** How the app answers an error; the REST scope judges credentials first, then hands it on. */
export type ErrorAnswerer = (err: Error, req: FastifyRequest, reply: FastifyReply) => FastifyReply;

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The /v1 REST API: each resource's routes (gateway/rest/<resource>/routes.ts) calling the core
 * over `transport`, validated and described by the schemas beside them, in a scope of its own:
 * JSON bodies only, and an action without parameters may send no body.
 * Call before any other route is added, so that /v1/openapi.json sees them all.
 */
export async function registerRestApi(app: FastifyInstance, transport: Transport, publicUrl: string, answerError: ErrorAnswerer): Promise<void> {
  await describeRestApi(app, publicUrl);
  for (const schema of [...ORDER_SCHEMAS, ...ENDPOINT_SCHEMAS, ...EVENT_SCHEMAS]) app.addSchema(schema);
  const orders = createClient(OrderService, transport);

  /** Throws the core's refusal of this request's credentials, if it refuses them. */
  async function judgeCredentials(req: FastifyRequest): Promise<void> {
    await orders.getOrder({ id: '' }, coreCall(req)).catch((err: unknown) => {
      const code = ConnectError.from(err).code;
      if (code === Code.Unauthenticated || code === Code.PermissionDenied || code === Code.ResourceExhausted) throw err;
    });
  }

  await app.register(async (rest) => {
    rest.addHook('onRequest', async (req) => {
      const hasBody = Number(req.headers['content-length'] ?? 0) > 0 || req.headers['transfer-encoding'] !== undefined;
      if (hasBody && !/^application\/json\s*(;|$)/i.test(req.headers['content-type'] ?? '')) {
        throw new RestError(415, 'invalid_request_error', 'unsupported_media_type', 'Send request bodies as JSON with "Content-Type: application/json".');
      }
    });
    const defaultJson = rest.getDefaultJsonParser('error', 'error');
    rest.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
      if (body === '') return done(null, undefined);
      defaultJson(req, body as string, (err, value) => {
        // Fastify's parser refuses a prototype key as "invalid JSON"; say what it is when the JSON itself is fine.
        if (err && parsesAsJson(body as string)) {
          return done(new RestError(400, 'invalid_request_error', 'invalid_json', 'The body is valid JSON but has a "__proto__" or "constructor.prototype" key, which is refused.'), undefined);
        }
        done(err, value);
      });
    });
    // A request that fails its schema is told so in our words, but only once its credentials
    // pass: a caller without a valid key learns nothing about our parameters.
    rest.setErrorHandler(async (err: FastifyError & { validation?: SchemaError[] }, req, reply) => {
      let answer: Error = err;
      if (err.validation) {
        const part = err.validationContext ?? 'body';
        const schema = (req.routeOptions.schema as Record<string, unknown> | undefined)?.[part] as Record<string, unknown> | undefined;
        answer = toParamError(err.validation, part, req.body, schema);
      }
      if (answer instanceof RestError && answer.status === 400 && answer.code !== 'invalid_json') {
        try {
          await judgeCredentials(req);
        } catch (authErr) {
          answer = authErr as Error;
        }
      }
      return answerError(answer, req, reply);
    });
    returnCoreHeaders(rest);
    registerOrderRoutes(rest, orders);
    registerTestHelperRoutes(rest, createClient(TestHelperService, transport));
    registerWebhookEndpointRoutes(rest, createClient(WebhookEndpointService, transport));
    registerEventRoutes(rest, createClient(EventService, transport));
  });

  app.get('/v1/openapi.json', { schema: { operationId: 'openApi', summary: 'This document', tags: ['meta'], security: [], response: { 200: Type.Object({}, { additionalProperties: true, description: 'OpenAPI 3.1 document.' }) } } }, async (_req, reply) =>
    // Already JSON: sent as it is, not through the response schema.
    reply.type('application/json; charset=utf-8').serializer((doc) => JSON.stringify(doc)).send(app.swagger()),
  );
}
