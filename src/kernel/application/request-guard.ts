import { ApplicationError } from './application-error.ts';
import { getOption, hasOption, ScalarType, type DescField, type DescMessage, type DescService } from '@bufbuild/protobuf';
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from '@connectrpc/connect';
import { AUTHENTICATED_CALLER, CALL_TRACE } from './request-context.ts';
import type { ObjectModes } from '../ports/object-modes.port.ts';
import { IdKind, id_kind } from '../../gen/checkout/v1/field_options_pb.ts';
import { invalid } from '../domain/domain-error.ts';
import { toConnectError } from './connect-errors.ts';
import type { ErrorTable } from './error-mapping.ts';

/** What every id we issue looks like: a prefix and an opaque suffix of letters, digits and underscores. */
const ID_SHAPE = /^[A-Za-z0-9_]{1,100}$/;

/** Shows a refused value in a message without repeating an unbounded or invisible string. */
function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

function checkText(value: string, param: string): void {
  // Postgres text cannot hold NUL, and a lone surrogate cannot be stored as UTF-8: neither may reach a query.
  if (value.includes('\u0000') || !value.isWellFormed()) {
    throw new ApplicationError('request.string_invalid', `${param} must be valid Unicode text without NUL characters.`, param);
  }
}

function checkId(field: DescField, value: string, param: string): void {
  if (value === '' || ID_SHAPE.test(value)) return;
  switch (getOption(field, id_kind)) {
    case IdKind.CURSOR:
      throw new ApplicationError('list.cursor_invalid', `${param} ${shown(value)} is not an id this service issues.`, param);
    case IdKind.FILTER:
      throw invalid('request.parameter_invalid', param, `${param} ${shown(value)} is not an id this service issues.`);
    default:
      throw new ApplicationError('request.id_unknown', `No such object: ${shown(value)} is not an id this service issues.`, param);
  }
}

/**
 * Checks every string of a request message, at any depth: free text must be
 * valid Unicode without NUL, and a field marked with `(checkout.v1.id_kind)`
 * must have the shape of our ids. This is the one check at the core's edge
 * for what reaches the database, whichever transport brought the message.
 * @throws DomainError request.string_invalid, request.id_unknown, list.cursor_invalid or request.parameter_invalid
 */
export function checkRequestStrings(desc: DescMessage, message: Record<string, unknown>, path = ''): void {
  for (const field of desc.fields) {
    const param = path ? `${path}[${field.name}]` : field.name;
    let value: unknown;
    if (field.oneof) {
      const chosen = message[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
      value = chosen?.case === field.localName ? chosen.value : undefined;
    } else {
      value = message[field.localName];
    }
    if (value === undefined || value === null) continue;
    switch (field.fieldKind) {
      case 'scalar':
        if (field.scalar === ScalarType.STRING) {
          checkText(value as string, param);
          if (hasOption(field, id_kind)) checkId(field, value as string, param);
        }
        break;
      case 'message':
        checkRequestStrings(field.message, value as Record<string, unknown>, param);
        break;
      case 'list':
        (value as unknown[]).forEach((item, i) => {
          if (field.listKind === 'scalar' && field.scalar === ScalarType.STRING) checkText(item as string, `${param}[${i}]`);
          if (field.listKind === 'message') checkRequestStrings(field.message, item as Record<string, unknown>, `${param}[${i}]`);
        });
        break;
      case 'map':
        for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
          checkText(key, param);
          if (field.mapKind === 'scalar' && field.scalar === ScalarType.STRING) checkText(item as string, `${param}[${key}]`);
          if (field.mapKind === 'message') checkRequestStrings(field.message, item as Record<string, unknown>, `${param}[${key}]`);
        }
        break;
      case 'enum':
        break;
    }
  }
}

/** Where a fault of ours is logged: the error and the request id the client was given. */
export type OnInternalError = (err: unknown, requestId: string) => void;

const modeName = (livemode: boolean) => (livemode ? 'live' : 'test');

/**
 * A not-found answer to an authenticated caller, told (as Stripe does) when an id the call names as its
 * resource is one of the same merchant's objects in the other mode: `No such order: "ord_…"; a similar
 * object exists in test mode, but a live mode key was used to make this request.` Another merchant's ids,
 * and anonymous calls, get the answer unchanged. Only this path pays for the lookup.
 */
async function explainNotFound(err: ConnectError, input: DescMessage, req: Record<string, unknown>, ctx: HandlerContext, objects: ObjectModes | undefined): Promise<ConnectError> {
  const caller = ctx.values.get(AUTHENTICATED_CALLER);
  if (err.code !== Code.NotFound || !objects || !caller) return err;
  for (const field of input.fields) {
    if (field.fieldKind !== 'scalar' || field.scalar !== ScalarType.STRING || getOption(field, id_kind) !== IdKind.RESOURCE) continue;
    const id = req[field.localName];
    if (typeof id !== 'string' || id === '') continue;
    // A lookup that fails leaves the answer as it was: the hint is a courtesy, the 404 is the answer.
    const livemode = await objects.modeOf(caller.merchantId, id).catch(() => undefined);
    if (livemode !== !caller.livemode) continue;
    const named = err.rawMessage.includes(id) ? 'a similar object' : id;
    const message = `${err.rawMessage.replace(/\.$/, '')}; ${named} exists in ${modeName(livemode)} mode, but a ${modeName(caller.livemode)} mode key was used to make this request.`;
    // The details are ours (toConnectError made them), so they are the outgoing kind.
    const details = err.details.filter((d) => 'desc' in d);
    return new ConnectError(message, err.code, err.metadata, details, err.cause);
  }
  return err;
}

/**
 * Wraps a service implementation: every method first checks its request
 * with {@link checkRequestStrings} (when that fails and the service takes API
 * keys, `credentialsFirst` judges the key before the check's error is told),
 * and whatever it throws reaches the client
 * as the ConnectError {@link toConnectError} chooses. This is the one place
 * that turns an unknown fault into internal_error, after logging it with the
 * request id: the gateway's (REST's Request-Id, forwarded) or one made here,
 * which the answer then carries as request-id. With `objects`, a not-found answer to a caller with a key
 * says when the id is its merchant's in the other mode ({@link explainNotFound}). `errors` is the
 * composed error table (src/composition/modules.ts); the kernel's part alone when absent.
 */
export function guardRequests<S extends DescService>(
  service: S,
  impl: ServiceImpl<S>,
  onInternalError: OnInternalError,
  newRequestId: () => string,
  credentialsFirst?: (ctx: HandlerContext) => Promise<unknown>,
  objects?: ObjectModes,
  errors?: ErrorTable,
): ServiceImpl<S> {
  const guarded: Record<string, unknown> = {};
  const methods = impl as unknown as Record<string, (req: Record<string, unknown>, ctx: HandlerContext) => unknown>;
  for (const method of service.methods) {
    const fn = methods[method.localName];
    if (!fn) continue;
    const enter = async (req: Record<string, unknown>, ctx: HandlerContext): Promise<(err: unknown) => ConnectError> => {
      const trace = ctx.values.get(CALL_TRACE);
      if (trace) trace.entered = true;
      let requestId = ctx.requestHeader.get('request-id');
      if (requestId === null) {
        requestId = newRequestId();
        ctx.responseHeader.set('request-id', requestId);
      }
      const id = requestId;
      const fail = (err: unknown) => toConnectError(err, (fault) => onInternalError(fault, id), errors);
      try {
        checkRequestStrings(method.input, req);
      } catch (err) {
        // A caller without valid credentials learns nothing about our parameters: the key is judged first.
        if (credentialsFirst) await credentialsFirst(ctx).catch((authErr: unknown) => Promise.reject(fail(authErr)));
        throw fail(err);
      }
      return fail;
    };
    guarded[method.localName] =
      method.methodKind === 'unary'
        ? async (req: Record<string, unknown>, ctx: HandlerContext) => {
            const fail = await enter(req, ctx);
            try {
              return await fn.call(impl, req, ctx);
            } catch (err) {
              throw await explainNotFound(fail(err), method.input, req, ctx, objects);
            }
          }
        : async function* (req: Record<string, unknown>, ctx: HandlerContext) {
            const fail = await enter(req, ctx);
            try {
              yield* fn.call(impl, req, ctx) as AsyncIterable<unknown>;
            } catch (err) {
              throw await explainNotFound(fail(err), method.input, req, ctx, objects);
            }
          };
  }
  return guarded as ServiceImpl<S>;
}
