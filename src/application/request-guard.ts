import { getOption, hasOption, ScalarType, type DescField, type DescMessage, type DescService } from '@bufbuild/protobuf';
import type { HandlerContext, ServiceImpl } from '@connectrpc/connect';
import { CALL_TRACE } from './request-context.ts';
import { IdKind, id_kind } from '../gen/checkout/v1/field_options_pb.ts';
import { DomainError, invalid } from '../domain/shared/domain-error.ts';
import { toConnectError } from './connect-errors.ts';

/** What every id we issue looks like: a prefix and an opaque suffix of letters, digits and underscores. */
const ID_SHAPE = /^[A-Za-z0-9_]{1,100}$/;

/** Shows a refused value in a message without repeating an unbounded or invisible string. */
function shown(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}

function checkText(value: string, param: string): void {
  // Postgres text cannot hold NUL, and a lone surrogate cannot be stored as UTF-8: neither may reach a query.
  if (value.includes('\u0000') || !value.isWellFormed()) {
    throw invalid('request.string_invalid', param, `${param} must be valid Unicode text without NUL characters.`);
  }
}

function checkId(field: DescField, value: string, param: string): void {
  if (value === '' || ID_SHAPE.test(value)) return;
  switch (getOption(field, id_kind)) {
    case IdKind.CURSOR:
      throw invalid('list.cursor_invalid', param, `${param} ${shown(value)} is not an id this service issues.`);
    case IdKind.FILTER:
      throw invalid('request.parameter_invalid', param, `${param} ${shown(value)} is not an id this service issues.`);
    default:
      throw new DomainError('request.id_unknown', `No such object: ${shown(value)} is not an id this service issues.`, param);
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

/**
 * Wraps a service implementation so that every method first checks its
 * request with {@link checkRequestStrings}; a refusal reaches the client as
 * the ConnectError the domain error maps to.
 */
export function guardRequests<S extends DescService>(service: S, impl: ServiceImpl<S>, onInternalError: (err: unknown) => void): ServiceImpl<S> {
  const guarded: Record<string, unknown> = {};
  const methods = impl as unknown as Record<string, (req: Record<string, unknown>, ctx: unknown) => unknown>;
  for (const method of service.methods) {
    const fn = methods[method.localName];
    if (!fn) continue;
    const check = (req: Record<string, unknown>, ctx: unknown) => {
      const trace = (ctx as HandlerContext).values.get(CALL_TRACE);
      if (trace) trace.entered = true;
      try {
        checkRequestStrings(method.input, req);
      } catch (err) {
        throw toConnectError(err, onInternalError);
      }
    };
    guarded[method.localName] =
      method.methodKind === 'unary'
        ? (req: Record<string, unknown>, ctx: unknown) => {
            check(req, ctx);
            return fn.call(impl, req, ctx);
          }
        : async function* (req: Record<string, unknown>, ctx: unknown) {
            check(req, ctx);
            yield* fn.call(impl, req, ctx) as AsyncIterable<unknown>;
          };
  }
  return guarded as ServiceImpl<S>;
}
