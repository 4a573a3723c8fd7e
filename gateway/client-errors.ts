// Answers to requests that never reach a route: HTTP/1.1 parser errors and timeouts (Node's
// 'clientError'), paths the router cannot decode (Fastify's frameworkErrors), and the same two
// checks on h2c, where no Fastify runs. Each answers the documented REST error body.
import http, { type ServerResponse } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { randomFillSync } from 'node:crypto';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
import { RestError, toRestError, type RestErrorBody } from './rest/shared/rest-error.ts';

// Request ids are not secrets, but they should not collide: 20 characters from the CSPRNG, whose bytes
// are drawn 1 KiB at a time rather than with a call per request.
const requestIdBytes = Buffer.alloc(1024);
let requestIdOffset = requestIdBytes.length;

/** A new request id, as in the `Request-Id` header and `request_id` of error bodies. */
export function newRequestId(): string {
  let id = 'req_';
  while (id.length < 24) {
    if (requestIdOffset === requestIdBytes.length) {
      randomFillSync(requestIdBytes);
      requestIdOffset = 0;
    }
    const byte = requestIdBytes[requestIdOffset++]!;
    // Bytes of 248 and above are skipped, so every character is equally likely.
    if (byte < 248) id += BASE62[byte % 62];
  }
  return id;
}

/** What is wrong with a request before any route sees it. */
interface Problem {
  readonly status: number;
  readonly code: string;
  readonly message: string;
}

const maxHeaderKiB = () => Math.round(http.maxHeaderSize / 1024);

/** Node's parser error codes (and its timeout) mapped to our answer; any other parser error is request_malformed. */
function problemOf(err: NodeJS.ErrnoException): Problem {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, code: 'headers_too_large', message: `The request line and headers are larger than ${maxHeaderKiB()} KiB.` };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        status: 408,
        code: 'request_timeout',
        message: 'The request did not arrive in time (HTTP_HEADERS_TIMEOUT_MS for the headers, HTTP_REQUEST_TIMEOUT_MS for the whole request); the connection is closed.',
      };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, code: 'body_too_large', message: 'The chunk extensions of the request body are too large.' };
    default:
      return { status: 400, code: 'request_malformed', message: 'The request is not valid HTTP/1.1 (request line, header syntax or body framing).' };
  }
}

function bodyOf(problem: Problem, requestId: string): string {
  const body: RestErrorBody = { error: { type: 'invalid_request_error', code: problem.code, message: problem.message, request_id: requestId } };
  return JSON.stringify(body);
}

/** Sockets already answered, so a parser that keeps failing on trickled bytes does not answer twice. */
const answered = new WeakSet<Socket>();

/**
 * Fastify's `clientErrorHandler`: answers an HTTP/1.1 parser error or
 * timeout with the documented error body (431 headers_too_large, 408
 * request_timeout, 400 request_malformed) and closes the connection.
 */
export function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  // A response already under way cannot be followed by another; Node itself only destroys then.
  const current = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (answered.has(socket) || !socket.writable || current?.headersSent) {
    socket.destroy();
    return;
  }
  answered.add(socket);
  const problem = problemOf(err);
  const requestId = newRequestId();
  const body = bodyOf(problem, requestId);
  socket.end(
    `HTTP/1.1 ${problem.status} ${http.STATUS_CODES[problem.status]}\r\n` +
      'Content-Type: application/json; charset=utf-8\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      `Request-Id: ${requestId}\r\n` +
      'Connection: close\r\n\r\n' +
      body,
  );
  // end() sends the answer and a FIN; a client that keeps its side open is cut off shortly after.
  setTimeout(() => socket.destroy(), 1000).unref();
}

/**
 * Fastify's `frameworkErrors`: a path the router cannot decode (`/%zz`,
 * `/v1/orders/%`) is 400 path_invalid, a path parameter over the router's
 * 100 characters is 404 resource_missing, both with the documented body.
 */
export function frameworkErrorHandler(err: FastifyError, req: FastifyRequest, reply: FastifyReply): void {
  let mapped: { status: number; body: RestErrorBody };
  if (err.code === 'FST_ERR_BAD_URL') {
    mapped = toRestError(new RestError(400, 'invalid_request_error', 'path_invalid', malformedPathMessage), req.id);
  } else if (err.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    // No id of ours is that long: answered like an unknown id, as the core answers one of the wrong shape.
    mapped = toRestError(new RestError(404, 'invalid_request_error', 'resource_missing', 'No such resource: the id in the path is longer than 100 characters.', 'id'), req.id);
  } else {
    req.log.error({ err }, 'request failed');
    mapped = toRestError(err, req.id);
  }
  void reply.code(mapped.status).header('Request-Id', req.id).send(mapped.body);
}

const malformedPathMessage = 'The request path is not valid: "%" must be followed by two hexadecimal digits that encode UTF-8.';

/** Size of a header list as HTTP/2 counts it (RFC 7541 section 4.1: name, value and 32 octets per field). */
function headerListSize(rawHeaders: readonly string[]): number {
  let size = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) size += Buffer.byteLength(rawHeaders[i]!) + Buffer.byteLength(rawHeaders[i + 1]!) + 32;
  return size;
}

/**
 * The two checks HTTP/1.1 requests get from Node and the router, for an h2c
 * request: headers within the same 16 KiB (431 headers_too_large) and a
 * decodable path (400 path_invalid). Undefined when the request may proceed.
 */
export function h2RequestProblem(req: Http2ServerRequest): Problem | undefined {
  if (headerListSize(req.rawHeaders) > http.maxHeaderSize) {
    return { status: 431, code: 'headers_too_large', message: `The request headers are larger than ${maxHeaderKiB()} KiB.` };
  }
  try {
    decodeURI(String(req.url).split('?')[0]!);
  } catch {
    return { status: 400, code: 'path_invalid', message: malformedPathMessage };
  }
  return undefined;
}

/** The part of a response sendH2Error needs (Node's HTTP/2 compatibility response, or what Connect's fallback gets). */
interface MinimalResponse {
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body: string): unknown;
}

/** Answers an h2c request with the documented error body. */
export function sendH2Error(res: MinimalResponse, status: number, code: string, message: string): void {
  const requestId = newRequestId();
  const body = bodyOf({ status, code, message }, requestId);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'request-id': requestId });
  res.end(body);
}
