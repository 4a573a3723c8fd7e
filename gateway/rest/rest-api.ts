import { Code, ConnectError, createClient, type Transport } from '@connectrpc/connect';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { OrderService } from '../../src/gen/checkout/v1/order_pb.ts';
import { coreCall, returnCoreHeaders } from './shared/core-call.ts';
import { RestError } from './shared/rest-error.ts';
import { schemaErrors, toParamError, type SchemaError } from './shared/validation.ts';
import { describeRestApi } from './shared/openapi.ts';
import { REST_RESOURCES } from './resources.ts';

/** How the app answers an error; the REST scope judges credentials first, then hands it on. */
export type ErrorAnswerer = (err: Error, req: FastifyRequest, reply: FastifyReply) => FastifyReply;

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/**
 * Refuses a query string whose escapes are not percent-encoded UTF-8 (`%FF`, `%ED%A0%80`):
 * the query parser would replace them with U+FFFD and the request would go on with a value the
 * caller never sent.
 * @throws RestError 400 parameter_invalid_string naming the parameter
 */
function checkQueryEncoding(url: string): void {
  const start = url.indexOf('?');
  if (start < 0) return;
  for (const pair of url.slice(start + 1).split('&')) {
    const [name = '', value = ''] = pair.split('=', 2);
    for (const part of [name, value]) {
      try {
        decodeURIComponent(part.replaceAll('+', ' '));
      } catch {
        const param = name.replace(/%[0-9A-Fa-f]{2}/g, '?').slice(0, 40);
        throw new RestError(400, 'invalid_request_error', 'parameter_invalid_string', `The query parameter ${param} is not percent-encoded UTF-8.`, param);
      }
    }
  }
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * The /v1 REST API: each resource's routes (gateway/rest/<resource>/, listed in resources.ts) calling the core
 * over `transport`, validated and described by the schemas beside them, in a scope of its own:
 * JSON bodies only, and an action without parameters may send no body.
 * Call before any other route is added, so that /v1/openapi.json sees them all.
 */
export async function registerRestApi(app: FastifyInstance, transport: Transport, publicUrl: string, answerError: ErrorAnswerer): Promise<void> {
  await describeRestApi(app, publicUrl);
  for (const resource of REST_RESOURCES) for (const schema of resource.schemas) app.addSchema(schema);
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
      const type = req.headers['content-type'] ?? '';
      const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1];
      if (hasBody && (!/^application\/json\s*(;|$)/i.test(type) || (charset !== undefined && !/^utf-?8$/i.test(charset)))) {
        throw new RestError(415, 'invalid_request_error', 'unsupported_media_type', 'Send request bodies as JSON in UTF-8 with "Content-Type: application/json".');
      }
      checkQueryEncoding(req.url);
    });
    const defaultJson = rest.getDefaultJsonParser('error', 'error');
    rest.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, raw, done) => {
      let body: string;
      try {
        // Invalid UTF-8 would otherwise become U+FFFD and be stored as if the caller had sent it.
        body = UTF8.decode(raw as Buffer);
      } catch {
        return done(new RestError(400, 'invalid_request_error', 'invalid_json', 'The body is not valid UTF-8.'), undefined);
      }
      if (body === '') return done(null, undefined);
      defaultJson(req, body, (err, value) => {
        // Fastify's parser refuses a prototype key as "invalid JSON"; say what it is when the JSON itself is fine.
        if (err && parsesAsJson(body)) {
          return done(new RestError(400, 'invalid_request_error', 'invalid_json', 'The body is valid JSON but has a "__proto__" or "constructor.prototype" key, which is refused.'), undefined);
        }
        done(err, value);
      });
    });
    // A request that fails its schema is told so in our words, but only once its credentials
    // pass: a caller without a valid key learns nothing about our parameters.
    rest.setErrorHandler(async (err: FastifyError & { validation?: SchemaError[] }, req, reply) => {
      const paramFault = err.validation !== undefined || (err instanceof RestError && err.status === 400 && err.code !== 'invalid_json');
      if (paramFault) {
        try {
          await judgeCredentials(req);
        } catch (authErr) {
          return answerError(authErr as Error, req, reply);
        }
      }
      if (!err.validation) return answerError(err, req, reply);
      const part = err.validationContext ?? 'body';
      const schema = (req.routeOptions.schema as Record<string, unknown> | undefined)?.[part] as Record<string, unknown> | undefined;
      const value = part === 'querystring' ? req.query : part === 'params' ? req.params : part === 'headers' ? req.headers : req.body;
      const every = schema ? schemaErrors(schema, value) : [];
      return answerError(toParamError(every.length ? every : err.validation, part, req.body, schema), req, reply);
    });
    returnCoreHeaders(rest);
    for (const resource of REST_RESOURCES) resource.register(rest, transport);
  });

  app.get('/v1/openapi.json', { schema: { operationId: 'openApi', summary: 'This document', tags: ['meta'], security: [], response: { 200: Type.Object({}, { additionalProperties: true, description: 'OpenAPI 3.1 document.' }) } } }, async (_req, reply) =>
    // Already JSON: sent as it is, not through the response schema.
    reply.type('application/json; charset=utf-8').serializer((doc) => JSON.stringify(doc)).send(app.swagger()),
  );
}
