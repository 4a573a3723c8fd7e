import { create, toBinary, type DescFile, type DescService } from '@bufbuild/protobuf';
import { FileDescriptorProtoSchema } from '@bufbuild/protobuf/wkt';
import { nestedTypes } from '@bufbuild/protobuf/reflect';
import { Code, type ServiceImpl } from '@connectrpc/connect';
import * as v1 from '../../gen/grpc/reflection/v1/reflection_pb.ts';
import * as v1alpha from '../../gen/grpc/reflection/v1alpha/reflection_pb.ts';

/** The question of one reflection request, the same in v1 and v1alpha. */
type Question =
  | { readonly case: 'fileByFilename' | 'fileContainingSymbol' | 'allExtensionNumbersOfType' | 'listServices'; readonly value: string }
  | { readonly case: 'fileContainingExtension'; readonly value: { readonly containingType: string; readonly extensionNumber: number } }
  | { readonly case: undefined; readonly value?: undefined };

/** The answer to one question, the same in v1 and v1alpha. */
type Answer =
  | { case: 'fileDescriptorResponse'; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: 'allExtensionNumbersResponse'; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: 'listServicesResponse'; value: { service: { name: string }[] } }
  | { case: 'errorResponse'; value: { errorCode: number; errorMessage: string } };

/** What the served services' files declare, indexed for the questions of the reflection protocol. */
interface Index {
  readonly services: readonly string[];
  readonly byFilename: ReadonlyMap<string, DescFile>;
  readonly bySymbol: ReadonlyMap<string, DescFile>;
  /** Extensions by extended message, then by field number. */
  readonly extensions: ReadonlyMap<string, ReadonlyMap<number, DescFile>>;
}

/** Indexes the files of `services` and every file they import, transitively. */
function indexServices(services: readonly DescService[]): Index {
  const byFilename = new Map<string, DescFile>();
  const bySymbol = new Map<string, DescFile>();
  const extensions = new Map<string, Map<number, DescFile>>();
  const visit = (file: DescFile) => {
    if (byFilename.has(file.proto.name)) return;
    byFilename.set(file.proto.name, file);
    for (const dep of file.dependencies) visit(dep);
    for (const type of nestedTypes(file)) {
      bySymbol.set(type.typeName, file);
      switch (type.kind) {
        case 'message':
          for (const field of type.fields) bySymbol.set(`${type.typeName}.${field.name}`, file);
          for (const oneof of type.oneofs) bySymbol.set(`${type.typeName}.${oneof.name}`, file);
          break;
        case 'enum': {
          // Enum values are scoped beside their enum, as in C++.
          const scope = type.typeName.slice(0, type.typeName.length - type.name.length);
          for (const value of type.values) bySymbol.set(`${scope}${value.name}`, file);
          break;
        }
        case 'service':
          for (const method of type.methods) bySymbol.set(`${type.typeName}.${method.name}`, file);
          break;
        case 'extension': {
          const numbers = extensions.get(type.extendee.typeName) ?? new Map<number, DescFile>();
          numbers.set(type.number, file);
          extensions.set(type.extendee.typeName, numbers);
          break;
        }
      }
    }
  };
  for (const service of services) visit(service.file);
  return { services: [...new Set(services.map((s) => s.typeName))].sort(), byFilename, bySymbol, extensions };
}

/**
 * Answers the questions of one stream. A file is sent with those it imports
 * that this stream has not been sent yet, as the protocol allows (a client
 * keeps what it was sent on the stream).
 */
function answerer(index: Index): (question: Question) => Answer {
  const sent = new Set<string>();
  const files = (file: DescFile): Answer => {
    const out: DescFile[] = [];
    const add = (f: DescFile, always: boolean) => {
      if (sent.has(f.proto.name) && !always) return;
      sent.add(f.proto.name);
      out.push(f);
      for (const dep of f.dependencies) add(dep, false);
    };
    add(file, true);
    return { case: 'fileDescriptorResponse', value: { fileDescriptorProto: out.map((f) => toBinary(FileDescriptorProtoSchema, f.proto)) } };
  };
  const notFound = (what: string): Answer => ({ case: 'errorResponse', value: { errorCode: Code.NotFound, errorMessage: `${what} not found.` } });
  return (question) => {
    switch (question.case) {
      case 'listServices':
        return { case: 'listServicesResponse', value: { service: index.services.map((name) => ({ name })) } };
      case 'fileByFilename': {
        const file = index.byFilename.get(question.value);
        return file ? files(file) : notFound(`File "${question.value}"`);
      }
      case 'fileContainingSymbol': {
        const symbol = question.value.replace(/^\./, '');
        const file = index.bySymbol.get(symbol);
        return file ? files(file) : notFound(`Symbol "${symbol}"`);
      }
      case 'fileContainingExtension': {
        const { containingType, extensionNumber } = question.value;
        const file = index.extensions.get(containingType.replace(/^\./, ''))?.get(extensionNumber);
        return file ? files(file) : notFound(`Extension ${extensionNumber} of "${containingType}"`);
      }
      case 'allExtensionNumbersOfType': {
        const type = question.value.replace(/^\./, '');
        if (!index.bySymbol.has(type)) return notFound(`Type "${type}"`);
        return { case: 'allExtensionNumbersResponse', value: { baseTypeName: type, extensionNumber: [...(index.extensions.get(type)?.keys() ?? [])].sort((a, b) => a - b) } };
      }
      case undefined:
        return { case: 'errorResponse', value: { errorCode: Code.InvalidArgument, errorMessage: 'The request asks nothing (message_request is not set).' } };
    }
  };
}

/** The two reflection services (v1, and v1alpha that older clients ask for), in one. */
export interface ServerReflection {
  readonly v1: ServiceImpl<typeof v1.ServerReflection>;
  readonly v1alpha: ServiceImpl<typeof v1alpha.ServerReflection>;
}

/**
 * Creates gRPC server reflection (v1 and v1alpha) over the descriptors the
 * generated code embeds: list_services names `services` (pass every service
 * served, the reflection services included), and the files asked for are
 * those of these services and the files they import, so buf curl, grpcurl,
 * grpcui and Postman need no proto files.
 */
export function createServerReflection(services: readonly DescService[]): ServerReflection {
  const index = indexServices(services);
  return {
    v1: {
      async *serverReflectionInfo(requests) {
        const answer = answerer(index);
        for await (const req of requests) {
          yield create(v1.ServerReflectionResponseSchema, { validHost: req.host, originalRequest: req, messageResponse: answer(req.messageRequest) });
        }
      },
    },
    v1alpha: {
      async *serverReflectionInfo(requests) {
        const answer = answerer(index);
        for await (const req of requests) {
          yield create(v1alpha.ServerReflectionResponseSchema, { validHost: req.host, originalRequest: req, messageResponse: answer(req.messageRequest) });
        }
      },
    },
  };
}
