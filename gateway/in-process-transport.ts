// The REST gateway's transport to the core. Not connect's createRouterTransport, which would need no
// code here: that one encodes every message to bytes and runs the whole Connect protocol in memory.
// Measured on a 2-core machine, the two taking turns (docs/architecture.md has the details):
// bench:transport, a trivial call 5.5 µs here against 119-123 µs through the router, and 215-305 µs
// more CPU per call through the router against the real core and Postgres; bench:orders, 976 orders/s
// at 0.78 ms server CPU per order here against 793 at 1.11 ms (medians of 5 runs).
// in-process-transport.spec.ts runs the same behaviour cases against both transports.
import { create, isMessage, type DescMessage, type DescMethod, type DescMethodUnary, type DescService, type MessageInitShape } from '@bufbuild/protobuf';
import {
  appendHeaders,
  Code,
  ConnectError,
  createContextValues,
  createHandlerContext,
  createMethodImplSpec,
  createServiceImplSpec,
  type ConnectRouter,
  type ContextValues,
  type HandlerContext,
  type MethodImpl,
  type MethodImplSpec,
  type ServiceImpl,
  type StreamResponse,
  type Transport,
  type UnaryResponse,
} from '@connectrpc/connect';

/** The key of a method in the collected implementations: its path without the leading slash. */
const pathOf = (method: DescMethod) => `${method.parent.typeName}/${method.name}`;

/**
 * Stands in for a ConnectRouter while a routes function runs: it keeps each
 * method's implementation as connect's own MethodImplSpec (bound to its
 * service object, missing methods answering Unimplemented) instead of building
 * protocol handlers. `handlers` stays empty: nothing is served over HTTP from
 * here, and per-service handler options (interceptors, limits) do not apply.
 */
class ImplementationCollector implements ConnectRouter {
  readonly handlers: ConnectRouter['handlers'] = [];
  readonly methods = new Map<string, MethodImplSpec>();

  service = <T extends DescService>(service: T, implementation: Partial<ServiceImpl<T>>) => {
    for (const spec of Object.values(createServiceImplSpec(service, implementation).methods)) this.methods.set(pathOf(spec.method), spec);
    return this;
  };

  rpc = <M extends DescMethod>(method: M, implementation: MethodImpl<M>) => {
    this.methods.set(pathOf(method), createMethodImplSpec(method, implementation));
    return this;
  };
}

/**
 * The error a network client would have received: a ConnectError keeps its
 * code, message and details, and carries the response headers and trailers
 * the implementation had set (the rate-limit headers, say) in its metadata,
 * as the Connect protocol sends them; anything else is Code.Internal.
 */
function asClientError(err: unknown, context: HandlerContext): ConnectError {
  if (!(err instanceof ConnectError)) return new ConnectError('internal error', Code.Internal, undefined, undefined, err);
  const error = new ConnectError(err.rawMessage, err.code, appendHeaders(context.responseHeader, err.metadata, context.responseTrailer), undefined, err);
  error.details = err.details;
  return error;
}

/** The reason a finished call's signal gives. */
const CALL_ENDED = new ConnectError('the call has ended', Code.Canceled);

/** Settles with `work`, or rejects with the signal's reason as soon as it aborts. */
function untilAborted<T>(signal: AbortSignal, work: Promise<T>): Promise<T> {
  let stop = () => {};
  const aborted = new Promise<never>((_, reject) => {
    const onAbort = () => reject(ConnectError.from(signal.reason, Code.Canceled));
    signal.addEventListener('abort', onAbort, { once: true });
    stop = () => signal.removeEventListener('abort', onAbort);
  });
  return Promise.race([work, aborted]).finally(stop);
}

/**
 * A Connect Transport that calls the core's service implementations in this
 * process: the same ServiceImpl, HandlerContext (headers in and out, context
 * values, deadline and signal) and ConnectErrors as over the network, without
 * encoding messages to bytes and back. Like connect's transports, it answers
 * Code.Internal for a fault that is not a ConnectError, Code.Canceled or
 * Code.DeadlineExceeded when the caller's signal or timeoutMs ends the call
 * first (the implementation sees its context's signal abort), and
 * Code.Unimplemented for a method nobody registered. The REST gateway's
 * default; a network transport (createConnectTransport) can replace it to run
 * the core in another process. Unary methods only.
 */
export function createInProcessTransport(routes: (router: ConnectRouter) => void): Transport {
  const collector = new ImplementationCollector();
  routes(collector);
  const methods = collector.methods;
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethodUnary<I, O>,
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0] | undefined,
      input: MessageInitShape<I>,
      contextValues?: ContextValues,
    ): Promise<UnaryResponse<I, O>> {
      const service = method.parent;
      const spec = methods.get(pathOf(method));
      if (spec?.kind !== 'unary') throw new ConnectError(`${service.typeName}.${method.name} is not implemented`, Code.Unimplemented);
      // As connect's transports: no timeout, or zero or less, means no deadline.
      const deadlineMs = timeoutMs !== undefined && timeoutMs > 0 ? timeoutMs : undefined;
      const context = createHandlerContext({
        service,
        method,
        protocolName: 'in-process',
        requestMethod: 'POST',
        url: `/${pathOf(method)}`,
        requestHeader: header,
        requestSignal: signal,
        timeoutMs: deadlineMs,
        contextValues: contextValues ?? createContextValues(),
      });
      try {
        if (context.signal.aborted) throw ConnectError.from(context.signal.reason, Code.Canceled);
        const request = isMessage(input, method.input) ? input : create(method.input, input);
        const pending = spec.impl(request, context);
        // Without a signal or a deadline nothing can end the call early (the REST gateway's calls): no race to set up.
        const output = signal === undefined && deadlineMs === undefined ? await pending : await untilAborted(context.signal, Promise.resolve(pending));
        return {
          stream: false,
          service,
          method,
          header: context.responseHeader,
          message: isMessage(output, method.output) ? output : create(method.output, output as MessageInitShape<O>),
          trailer: context.responseTrailer,
        };
      } catch (err) {
        // A deadline or the caller's abort ended the call: that is its answer, whatever the implementation threw.
        if (context.signal.aborted) throw ConnectError.from(context.signal.reason, Code.Canceled);
        throw asClientError(err, context);
      } finally {
        // As connect's handlers: the call is over, so the implementation's signal aborts and the deadline timer stops.
        // With a reason of our own: abort() without one builds a DOMException, a stack trace per call.
        context.abort(CALL_ENDED);
      }
    },
    async stream<I extends DescMessage, O extends DescMessage>(): Promise<StreamResponse<I, O>> {
      throw new ConnectError('streaming calls are not served in process; use a network transport', Code.Unimplemented);
    },
  };
}
