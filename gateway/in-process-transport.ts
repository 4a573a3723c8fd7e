import { create, isMessage, type DescMessage, type DescMethod, type DescService, type MessageInitShape } from '@bufbuild/protobuf';
import { Code, ConnectError, createHandlerContext, type ConnectRouter, type Transport } from '@connectrpc/connect';
import type { StreamResponse, UnaryResponse } from '@connectrpc/connect';

type UnaryFn = (request: unknown, context: ReturnType<typeof createHandlerContext>) => Promise<unknown> | unknown;

/** Collects the service implementations a routes function registers. */
function collectImplementations(routes: (router: ConnectRouter) => void): Map<string, Record<string, UnaryFn>> {
  const impls = new Map<string, Record<string, UnaryFn>>();
  const collector = {
    service(desc: DescService, impl: Record<string, UnaryFn>) {
      impls.set(desc.typeName, impl);
      return collector;
    },
    rpc() {
      throw new Error('the in-process transport serves whole services only');
    },
  };
  routes(collector as unknown as ConnectRouter);
  return impls;
}

/**
 * A Connect Transport that calls the core's service implementations in this
 * process: the same ServiceImpl, HandlerContext (headers in and out) and
 * ConnectErrors as over the network, without encoding messages to bytes and
 * back. The REST gateway's default; a network transport (createConnectTransport)
 * can replace it to run the core in another process. Unary methods only.
 */
export function createInProcessTransport(routes: (router: ConnectRouter) => void): Transport {
  const impls = collectImplementations(routes);
  return {
    async unary<I extends DescMessage, O extends DescMessage>(
      method: DescMethod & { input: I; output: O },
      signal: AbortSignal | undefined,
      timeoutMs: number | undefined,
      header: ConstructorParameters<typeof Headers>[0] | undefined,
      input: MessageInitShape<I>,
    ): Promise<UnaryResponse<I, O>> {
      const service = method.parent;
      const fn = impls.get(service.typeName)?.[method.localName];
      if (!fn) throw new ConnectError(`${service.typeName}/${method.name} is not implemented`, Code.Unimplemented);
      const context = createHandlerContext({
        service,
        method,
        protocolName: 'in-process',
        requestMethod: 'POST',
        url: `/${service.typeName}/${method.name}`,
        requestHeader: header,
        requestSignal: signal,
        timeoutMs,
      });
      const request = isMessage(input, method.input) ? input : create(method.input, input);
      const output = await fn(request, context);
      return {
        stream: false,
        service,
        method: method as never,
        header: context.responseHeader,
        message: (isMessage(output, method.output) ? output : create(method.output, output as never)) as never,
        trailer: context.responseTrailer,
      };
    },
    async stream<I extends DescMessage, O extends DescMessage>(): Promise<StreamResponse<I, O>> {
      throw new ConnectError('streaming calls are not served in process; use a network transport', Code.Unimplemented);
    },
  };
}
