import { maskCardNumbers } from '../../../src/modules/payment/domain/card.ts';
import { Code, ConnectError } from '@connectrpc/connect';
import { ErrorDetailSchema } from '../../../src/gen/checkout/v1/errors_pb.ts';

/** The REST error body: `{"error": {type, code, message, param, request_id}}`. */
export interface RestErrorBody {
  error: {
    type: string;
    code: string;
    message: string;
    param?: string;
    request_id: string;
  };
}

/** An error the gateway raises itself (bad JSON, a wrong type, an unknown field, an unknown route). */
export class RestError extends Error {
  override readonly name = 'RestError';
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly param: string | undefined;

  constructor(status: number, type: string, code: string, message: string, param?: string) {
    super(message);
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
  }
}

/** A 400 invalid_request_error about one parameter. */
export function invalidParam(code: string, param: string, message: string): RestError {
  return new RestError(400, 'invalid_request_error', code, message, param);
}

/** HTTP status of each Connect code. A new code fails the typecheck at the never below. */
export function httpStatusOf(code: Code): number {
  switch (code) {
    case Code.InvalidArgument:
    case Code.OutOfRange:
      return 400;
    case Code.Unauthenticated:
      return 401;
    case Code.PermissionDenied:
      return 403;
    case Code.NotFound:
      return 404;
    case Code.AlreadyExists:
    case Code.Aborted:
      return 409;
    case Code.FailedPrecondition:
      return 422;
    case Code.ResourceExhausted:
      return 429;
    case Code.Canceled:
      return 499;
    case Code.Unimplemented:
      return 501;
    case Code.Unavailable:
      return 503;
    case Code.DeadlineExceeded:
      return 504;
    case Code.Unknown:
    case Code.Internal:
    case Code.DataLoss:
      return 500;
    default: {
      const unmapped: never = code;
      throw new Error(`unmapped Connect code ${String(unmapped)}`);
    }
  }
}

/** Error metadata of the core that a REST error answer carries as headers. */
const ERROR_HEADERS = ['retry-after', 'ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset'];

/** Maps anything thrown while serving a REST call to its status, body and headers. */
export function toRestError(err: unknown, requestId: string): { status: number; body: RestErrorBody; headers: Record<string, string> } {
  if (err instanceof RestError) {
    return { status: err.status, body: body(err.type, err.code, err.message, err.param, requestId), headers: {} };
  }
  const connectErr = ConnectError.from(err);
  const detail = connectErr.findDetails(ErrorDetailSchema)[0];
  const headers: Record<string, string> = {};
  for (const name of ERROR_HEADERS) {
    const value = connectErr.metadata.get(name);
    if (value !== null) headers[name] = value;
  }
  return {
    status: httpStatusOf(connectErr.code),
    body: body(detail?.type ?? 'api_error', detail?.code || 'internal_error', connectErr.rawMessage, detail?.param, requestId),
    headers,
  };
}

function body(type: string, code: string, message: string, param: string | undefined, requestId: string): RestErrorBody {
  // Validation messages name what the caller sent (an unknown key, say): a card number never comes back whole.
  return { error: { type, code, message: maskCardNumbers(message), ...(param ? { param: maskCardNumbers(param) } : {}), request_id: requestId } };
}
