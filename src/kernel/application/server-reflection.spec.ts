import { create, fromBinary } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { Code, createClient, createRouterTransport } from '@connectrpc/connect';
import { describe, expect, it } from 'vitest';
import * as v1 from '../../gen/grpc/reflection/v1/reflection_pb.ts';
import * as v1alpha from '../../gen/grpc/reflection/v1alpha/reflection_pb.ts';
import { OrderService } from '../../gen/checkout/v1/order_pb.ts';
import { Health } from '../../gen/grpc/health/v1/health_pb.ts';
import { createServerReflection } from './server-reflection.ts';

const reflection = createServerReflection([OrderService, Health, v1.ServerReflection, v1alpha.ServerReflection]);
const transport = createRouterTransport((router) => {
  router.service(v1.ServerReflection, reflection.v1);
  router.service(v1alpha.ServerReflection, reflection.v1alpha);
});

/** Sends the questions on one v1 stream and answers the responses. */
async function ask(questions: v1.ServerReflectionRequest['messageRequest'][]): Promise<v1.ServerReflectionResponse[]> {
  const client = createClient(v1.ServerReflection, transport);
  async function* requests() {
    for (const messageRequest of questions) yield create(v1.ServerReflectionRequestSchema, { host: 'localhost', messageRequest });
  }
  const out: v1.ServerReflectionResponse[] = [];
  for await (const res of client.serverReflectionInfo(requests())) out.push(res);
  return out;
}

const fileNames = (res: v1.ServerReflectionResponse) =>
  res.messageResponse.case === 'fileDescriptorResponse' ? res.messageResponse.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name) : [];

describe('createServerReflection', () => {
  it('lists the services it was given', async () => {
    const [res] = await ask([{ case: 'listServices', value: '' }]);
    expect(res!.messageResponse).toMatchObject({
      case: 'listServicesResponse',
      value: { service: ['checkout.v1.OrderService', 'grpc.health.v1.Health', 'grpc.reflection.v1.ServerReflection', 'grpc.reflection.v1alpha.ServerReflection'].map((name) => ({ name })) },
    });
  });

  it('sends the file declaring a symbol with its imports, each file once per stream', async () => {
    const [byService, byMethod, byMessage, byFile] = await ask([
      { case: 'fileContainingSymbol', value: 'checkout.v1.OrderService' },
      { case: 'fileContainingSymbol', value: 'checkout.v1.OrderService.ListOrders' },
      { case: 'fileContainingSymbol', value: '.checkout.v1.Order' },
      { case: 'fileByFilename', value: 'google/protobuf/timestamp.proto' },
    ]);
    const first = fileNames(byService!);
    expect(first[0]).toBe('checkout/v1/order.proto');
    expect(first).toContain('google/protobuf/timestamp.proto');
    // Already sent on this stream: only the file asked for comes again.
    expect(fileNames(byMethod!)).toEqual(['checkout/v1/order.proto']);
    expect(fileNames(byMessage!)).toEqual(['checkout/v1/order.proto']);
    expect(fileNames(byFile!)).toEqual(['google/protobuf/timestamp.proto']);
    expect(byService!.originalRequest?.messageRequest).toEqual({ case: 'fileContainingSymbol', value: 'checkout.v1.OrderService' });
  });

  it('answers NOT_FOUND for what it does not know, and keeps the stream going', async () => {
    const [unknownSymbol, unknownFile, list] = await ask([
      { case: 'fileContainingSymbol', value: 'checkout.v1.Nope' },
      { case: 'fileByFilename', value: 'nope.proto' },
      { case: 'listServices', value: '*' },
    ]);
    expect(unknownSymbol!.messageResponse).toMatchObject({ case: 'errorResponse', value: { errorCode: Code.NotFound } });
    expect(unknownFile!.messageResponse).toMatchObject({ case: 'errorResponse', value: { errorCode: Code.NotFound } });
    expect(list!.messageResponse.case).toBe('listServicesResponse');
  });

  it('answers v1alpha the same way', async () => {
    const client = createClient(v1alpha.ServerReflection, transport);
    async function* requests() {
      yield create(v1alpha.ServerReflectionRequestSchema, { messageRequest: { case: 'fileContainingSymbol', value: 'grpc.health.v1.Health.Check' } });
    }
    const out: v1alpha.ServerReflectionResponse[] = [];
    for await (const res of client.serverReflectionInfo(requests())) out.push(res);
    expect(out).toHaveLength(1);
    const response = out[0]!.messageResponse;
    expect(response.case).toBe('fileDescriptorResponse');
    if (response.case === 'fileDescriptorResponse') {
      expect(response.value.fileDescriptorProto.map((b) => fromBinary(FileDescriptorProtoSchema, b).name)).toEqual(['grpc/health/v1/health.proto']);
    }
  });
});
