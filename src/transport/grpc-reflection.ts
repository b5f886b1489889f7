import { createRegistry, toBinary, type DescFile, type DescService, type Registry } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import { Code, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import { ServerReflection } from "../../gen/grpc/reflection/v1/reflection_pb.js";
import { ServerReflection as ServerReflectionV1Alpha } from "../../gen/grpc/reflection/v1alpha/reflection_pb.js";
import type { Authenticator } from "../accounts/authenticator.js";
import { noteCaller, requestLogKey } from "../observability/request-log.js";

// gRPC server reflection (grpc.reflection.v1 and its predecessor v1alpha, whose messages are the same),
// so grpcurl and buf curl call the services without being given the protos. The answers are the
// file descriptors compiled into the generated code (gen/), each with the files it imports.

/** A reflection request of either version, as far as it is read here. */
interface ReflectionRequest {
  host: string;
  messageRequest:
    | { case: "fileByFilename" | "fileContainingSymbol" | "allExtensionNumbersOfType" | "listServices"; value: string }
    | { case: "fileContainingExtension"; value: { containingType: string; extensionNumber: number } }
    | { case: undefined; value?: undefined };
}

type ReflectionAnswer =
  | { case: "fileDescriptorResponse"; value: { fileDescriptorProto: Uint8Array[] } }
  | { case: "allExtensionNumbersResponse"; value: { baseTypeName: string; extensionNumber: number[] } }
  | { case: "listServicesResponse"; value: { service: Array<{ name: string }> } }
  | { case: "errorResponse"; value: { errorCode: number; errorMessage: string } };

/** Every file the services are defined in, and every file those import, by file name. */
export function descriptorFiles(services: DescService[]): Map<string, DescFile> {
  const files = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (files.has(file.proto.name)) return;
    files.set(file.proto.name, file);
    for (const dependency of file.dependencies) visit(dependency);
  };
  for (const service of services) visit(service.file);
  return files;
}

/** The file defining a fully-qualified name: a type, a service, an extension, a method or a field. */
function fileOfSymbol(registry: Registry, symbol: string): DescFile | undefined {
  const desc = registry.get(symbol);
  if (desc) return desc.file;
  const dot = symbol.lastIndexOf(".");
  const parent = registry.get(symbol.slice(0, dot));
  const member = symbol.slice(dot + 1);
  if (parent?.kind === "service" && parent.methods.some((m) => m.name === member)) return parent.file;
  if (parent?.kind === "message" && parent.fields.some((f) => f.name === member)) return parent.file;
  return undefined;
}

/**
 * Answers reflection requests about the given services. `sent` holds the files already sent on the
 * stream: imports are sent once per stream, the file asked for always.
 */
export function reflectionAnswerer(services: DescService[]) {
  const files = descriptorFiles(services);
  const registry = createRegistry(...files.values());
  const serviceNames = services.map((s) => ({ name: s.typeName }));
  const encoded = new Map<string, Uint8Array>();
  const bytesOf = (file: DescFile) => {
    let bytes = encoded.get(file.proto.name);
    if (!bytes) encoded.set(file.proto.name, (bytes = toBinary(FileDescriptorProtoSchema, file.proto)));
    return bytes;
  };
  const notFound = (what: string): ReflectionAnswer => ({
    case: "errorResponse",
    value: { errorCode: Code.NotFound, errorMessage: `${what.slice(0, 200)} not found` },
  });
  const withImports = (file: DescFile, sent: Set<string>): ReflectionAnswer => {
    const out = [file];
    const visit = (f: DescFile) => {
      for (const dependency of f.dependencies) {
        if (sent.has(dependency.proto.name) || out.includes(dependency)) continue;
        out.push(dependency);
        visit(dependency);
      }
    };
    visit(file);
    for (const f of out) sent.add(f.proto.name);
    return { case: "fileDescriptorResponse", value: { fileDescriptorProto: out.map(bytesOf) } };
  };

  return function answer(request: ReflectionRequest["messageRequest"], sent: Set<string>): ReflectionAnswer {
    switch (request.case) {
      case "listServices":
        return { case: "listServicesResponse", value: { service: serviceNames } };
      case "fileByFilename": {
        const file = files.get(request.value);
        return file ? withImports(file, sent) : notFound(`file ${request.value}`);
      }
      case "fileContainingSymbol": {
        const file = fileOfSymbol(registry, request.value);
        return file ? withImports(file, sent) : notFound(`symbol ${request.value}`);
      }
      case "fileContainingExtension": {
        const { containingType, extensionNumber } = request.value;
        const message = registry.getMessage(containingType);
        const extension = message && registry.getExtensionFor(message, extensionNumber);
        return extension ? withImports(extension.file, sent) : notFound(`extension ${extensionNumber} of ${containingType}`);
      }
      case "allExtensionNumbersOfType": {
        if (!registry.getMessage(request.value)) return notFound(`type ${request.value}`);
        const numbers = [...registry].flatMap((d) => (d.kind === "extension" && d.extendee.typeName === request.value ? [d.number] : []));
        return { case: "allExtensionNumbersResponse", value: { baseTypeName: request.value, extensionNumber: numbers } };
      }
      default:
        return { case: "errorResponse", value: { errorCode: Code.InvalidArgument, errorMessage: "the request names no question" } };
    }
  };
}

/**
 * Both reflection services over the given services (which should include the reflection services
 * themselves, as grpc-go lists them). Like the OpenAPI document, reflection needs a valid key (any
 * role); grpcurl and buf curl send their -H headers with reflection requests too.
 */
export function reflectionServices(services: DescService[], auth: Authenticator) {
  const answer = reflectionAnswerer(services);
  async function* serverReflectionInfo(requests: AsyncIterable<ReflectionRequest>, ctx: HandlerContext) {
    noteCaller(ctx.values.get(requestLogKey), await auth.authenticate(ctx.requestHeader));
    const sent = new Set<string>();
    for await (const request of requests) {
      yield { validHost: request.host, originalRequest: request, messageResponse: answer(request.messageRequest, sent) };
    }
  }
  return [
    { service: ServerReflection, impl: { serverReflectionInfo } as ServiceImpl<typeof ServerReflection> },
    { service: ServerReflectionV1Alpha, impl: { serverReflectionInfo } as ServiceImpl<typeof ServerReflectionV1Alpha> },
  ];
}
