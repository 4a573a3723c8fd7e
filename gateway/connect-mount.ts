import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Code, ConnectError, createConnectRouter, type ConnectRouter, type ContextValues, type Interceptor } from '@connectrpc/connect';
import { createAsyncIterable, readAllBytes, uResponseNotFound, type UniversalHandler, type UniversalServerResponse } from '@connectrpc/connect/protocol';
import * as protoConnect from '@connectrpc/connect/protocol-connect';
import * as protoGrpc from '@connectrpc/connect/protocol-grpc';
import * as protoGrpcWeb from '@connectrpc/connect/protocol-grpc-web';
import { compressionBrotli, compressionGzip, universalRequestFromNodeRequest, universalResponseToNodeResponse } from '@connectrpc/connect-node';
import { connectError } from '../src/kernel/application/connect-errors.ts';
import { CALL_TRACE } from '../src/kernel/application/request-context.ts';
import { ErrorDetailSchema } from '../src/gen/checkout/v1/errors_pb.ts';
import type { HttpMetrics, RpcCallRecorder } from '../src/kernel/ports/metrics.port.ts';

/** The largest request message accepted, as for REST bodies (1 MiB), before and after decompression. */
export const MAX_REQUEST_BYTES = 1024 * 1024;

/** Where the Connect mount reports a handler that failed outside any call (a broken socket, say). */
export type OnHandlerError = (err: unknown, where: string) => void;

/**
 * Answers, as invalid_argument, what connect-es answers with a 5xx although
 * the request caused it: a body that is not valid binary Protobuf
 * ("parse binary: …", `internal`), a GET message that is not base64 or does
 * not decompress (`internal`), an unknown compression (`unimplemented`, 501).
 * A failure counts as the request's when it came before the core's method
 * was entered (CALL_TRACE). Any other 5xx is reported to onError, so that
 * every one is logged. Only the Connect protocol answers with such statuses;
 * gRPC and gRPC-Web answer HTTP 200 with the status in a trailer and are left
 * as they are (gRPC's own servers use INTERNAL for undecodable messages too).
 */
function withRequestFaultsAsInvalidArgument(handler: UniversalHandler, onError: OnHandlerError): UniversalHandler {
  const where = `${handler.service.typeName}/${handler.method.name}`;
  const wrapped = async (req: Parameters<UniversalHandler>[0]): Promise<UniversalServerResponse> => {
    const trace = { entered: false };
    req.contextValues?.set(CALL_TRACE, trace);
    const res = await handler(req);
    if (res.status < 500 || !res.body || !res.header?.get('content-type')?.startsWith(protoConnect.contentTypeUnaryJson)) return res;
    const bytes = await readAllBytes(res.body, Number.MAX_SAFE_INTEGER);
    const error = protoConnect.errorFromJsonBytes(bytes, undefined, new ConnectError('', Code.Internal));
    if (trace.entered) {
      // Our own internal errors were logged where they happened; anything else (a response that did not serialize) is logged here.
      if (error.code === Code.Internal && error.findDetails(ErrorDetailSchema).length === 0) onError(error, where);
      return { ...res, body: createAsyncIterable([bytes]) };
    }
    const malformed = error.rawMessage.startsWith('parse binary:');
    const invalid = connectError(
      malformed
        ? `The request body is not a valid ${handler.method.input.typeName} message (${error.rawMessage.slice('parse binary: '.length)}).`
        : `The request could not be read: ${error.rawMessage === 'internal error' ? 'it is malformed (for a GET: is message valid base64, and encoding right?)' : error.rawMessage}.`,
      { code: Code.InvalidArgument, type: 'invalid_request_error', publicCode: malformed ? 'message_malformed' : 'request_malformed' },
    );
    const body = protoConnect.errorToJsonBytes(invalid, {});
    const header = new Headers(res.header);
    header.set('content-length', String(body.byteLength));
    return { status: protoConnect.codeToHttpStatus(Code.InvalidArgument), header, body: createAsyncIterable([body]), trailer: res.trailer };
  };
  return Object.assign(wrapped, handler);
}

/**
 * Counts every call by procedure and Connect code (ok when it answers), with
 * its duration until the response starts. Runs for the mounted protocols
 * only: REST's in-process calls are counted as the REST routes they serve.
 */
function rpcMetricsInterceptor(metrics: HttpMetrics): Interceptor {
  const recorders = new Map<object, RpcCallRecorder>();
  return (next) => async (req) => {
    const started = performance.now();
    let record = recorders.get(req.method);
    if (!record) {
      record = metrics.rpcProcedure(`${req.service.typeName}/${req.method.name}`);
      recorders.set(req.method, record);
    }
    try {
      const res = await next(req);
      record('ok', (performance.now() - started) / 1000);
      return res;
    } catch (err) {
      record(protoConnect.codeToString(ConnectError.from(err).code), (performance.now() - started) / 1000);
      throw err;
    }
  };
}

/** The core's Connect, gRPC and gRPC-Web handlers, with malformed input answered as invalid_argument. */
function connectHandlers(routes: (router: ConnectRouter) => void, onError: OnHandlerError, shutdownSignal: AbortSignal | undefined, metrics: HttpMetrics | undefined): UniversalHandler[] {
  // readMaxBytes bounds a request body after decompression too, so a small compressed bomb cannot fill the memory.
  // shutdownSignal aborts every call's signal: a server stream then ends rather than hold its connection open.
  const router = createConnectRouter({
    acceptCompression: [compressionGzip, compressionBrotli],
    readMaxBytes: MAX_REQUEST_BYTES,
    shutdownSignal,
    interceptors: metrics ? [rpcMetricsInterceptor(metrics)] : [],
  });
  routes(router);
  return router.handlers.map((handler) => withRequestFaultsAsInvalidArgument(handler, onError));
}

/**
 * Mounts the core's Connect routes on Fastify (HTTP/1.1: Connect and
 * gRPC-Web), as @connectrpc/connect-fastify does, with the handlers of
 * {@link connectHandlers}. Register it in a scope of its own: it replaces the
 * content-type parsers of the Connect media types there.
 */
export function mountConnect(
  app: FastifyInstance,
  options: {
    readonly routes: (router: ConnectRouter) => void;
    readonly contextValues: (req: FastifyRequest) => ContextValues;
    readonly onError: OnHandlerError;
    readonly shutdownSignal?: AbortSignal;
    /** Counts calls by procedure and code; nothing is counted without it. */
    readonly metrics?: HttpMetrics;
  },
): void {
  const noop = (_req: unknown, _payload: unknown, done: (err: null, body: undefined) => void) => done(null, undefined);
  app.addContentTypeParser(
    [protoConnect.contentTypeUnaryJson, protoConnect.contentTypeStreamJson, protoGrpcWeb.contentTypeProto, protoGrpcWeb.contentTypeJson, protoGrpc.contentTypeProto, protoGrpc.contentTypeJson],
    noop,
  );
  for (const pattern of [protoGrpc.contentTypeRegExp, protoGrpcWeb.contentTypeRegExp, protoConnect.contentTypeRegExp]) app.addContentTypeParser(pattern, noop);
  for (const handler of connectHandlers(options.routes, options.onError, options.shutdownSignal, options.metrics)) {
    app.all(handler.requestPath, async (req, reply) => {
      // The core answers under the gateway's request id (the Request-Id header, the log lines' request_id), not one of its own or the client's.
      req.raw.headers['request-id'] = req.id;
      try {
        const res = await handler(universalRequestFromNodeRequest(req.raw, reply.raw, req.body as never, options.contextValues(req)));
        // Headers set on the reply (Request-Id) live in Fastify until send(); this path writes the raw response.
        for (const [key, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(key, value);
        await universalResponseToNodeResponse(res, reply.raw);
      } catch (err) {
        if (ConnectError.from(err).code !== Code.Aborted) options.onError(err, `${handler.service.typeName}/${handler.method.name}`);
      }
    });
  }
}

/**
 * A Node request listener (for the HTTP/2 server: gRPC, and Connect over
 * h2c) serving the same handlers; unknown paths go to `notFound`, or answer
 * an empty 404 without it.
 */
export function connectNodeListener(
  routes: (router: ConnectRouter) => void,
  options: {
    readonly contextValues: (req: IncomingMessage | Http2ServerRequest) => ContextValues;
    readonly onError: OnHandlerError;
    readonly notFound?: (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;
    readonly shutdownSignal?: AbortSignal;
    readonly metrics?: HttpMetrics;
  },
): (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void {
  const paths = new Map(connectHandlers(routes, options.onError, options.shutdownSignal, options.metrics).map((h) => [h.requestPath, h]));
  return (req, res) => {
    const handler = paths.get(req.url?.split('?', 2)[0] ?? '');
    if (!handler) {
      if (options.notFound) return options.notFound(req, res);
      (res as ServerResponse).writeHead(uResponseNotFound.status);
      res.end();
      return;
    }
    handler(universalRequestFromNodeRequest(req, res, undefined, options.contextValues(req)))
      .then((uRes) => universalResponseToNodeResponse(uRes, res))
      .catch((err: unknown) => {
        if (ConnectError.from(err).code !== Code.Aborted) options.onError(err, `${handler.service.typeName}/${handler.method.name}`);
      });
  };
}
