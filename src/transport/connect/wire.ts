import * as protoConnect from "@connectrpc/connect/protocol-connect";
import * as protoGrpc from "@connectrpc/connect/protocol-grpc";
import * as protoGrpcWeb from "@connectrpc/connect/protocol-grpc-web";
import type { ConnectError } from "@connectrpc/connect";
import type { UniversalServerResponse } from "@connectrpc/connect/protocol";
import { createAsyncIterable } from "@connectrpc/connect/protocol";

/** How a request to a Connect route is framed, read from its content type. */
export interface Wire {
  protocol: "connect" | "grpc" | "grpc-web";
  binary: boolean;
  /** The response content type of this protocol and format. */
  contentType: string;
  /** The request headers naming the body's compression and the call's timeout. */
  encodingHeader: string;
  timeoutHeader: string;
  parseTimeout(value: string | null, maxTimeoutMs: number): { error?: ConnectError };
}

/** The wire of a unary call, or undefined for content types no unary handler serves (streaming, grpc-web-text, others). */
export function wireOf(contentType: string | null): Wire | undefined {
  const connect = protoConnect.parseContentType(contentType);
  if (connect && !connect.stream) {
    return {
      protocol: "connect",
      binary: connect.binary,
      contentType: connect.binary ? protoConnect.contentTypeUnaryProto : protoConnect.contentTypeUnaryJson,
      encodingHeader: protoConnect.headerUnaryEncoding,
      timeoutHeader: protoConnect.headerTimeout,
      parseTimeout: protoConnect.parseTimeout,
    };
  }
  const grpc = protoGrpc.parseContentType(contentType);
  if (grpc) {
    return {
      protocol: "grpc",
      binary: grpc.binary,
      contentType: grpc.binary ? protoGrpc.contentTypeProto : protoGrpc.contentTypeJson,
      encodingHeader: protoGrpc.headerEncoding,
      timeoutHeader: protoGrpc.headerTimeout,
      parseTimeout: protoGrpc.parseTimeout,
    };
  }
  const grpcWeb = protoGrpcWeb.parseContentType(contentType);
  if (grpcWeb && !grpcWeb.text) {
    return {
      protocol: "grpc-web",
      binary: grpcWeb.binary,
      contentType: grpcWeb.binary ? protoGrpcWeb.contentTypeProto : protoGrpcWeb.contentTypeJson,
      encodingHeader: protoGrpcWeb.headerEncoding,
      timeoutHeader: protoGrpcWeb.headerTimeout,
      parseTimeout: protoGrpcWeb.parseTimeout,
    };
  }
  return undefined;
}

/**
 * The wire to answer a refused request on: its own, or for an unknown content type the protocol it
 * names (an "application/grpc+…" caller reads gRPC statuses), else Connect's JSON errors.
 */
export function refusalWireOf(contentType: string | null): Wire | undefined {
  const wire = wireOf(contentType);
  if (wire) return wire;
  const type = contentType?.toLowerCase() ?? "";
  if (type.startsWith("application/grpc-web")) return wireOf("application/grpc-web+proto");
  if (type.startsWith("application/grpc")) return wireOf("application/grpc+proto");
  return undefined;
}

/**
 * A complete error response in the wire's protocol: Connect's JSON error body with its HTTP status; for
 * gRPC, headers and then the status in trailers, as Connect answers a failed call (grpc-js waits for
 * trailers: a status in the headers of a response that is not ended with them left it hanging or
 * failing with INTERNAL); for gRPC-Web a trailers-only response. The error's details (our ErrorInfo)
 * and metadata (rate-limit headers) are carried as Connect itself would carry them.
 */
export function errorResponse(wire: Wire | undefined, err: ConnectError): UniversalServerResponse {
  const header = new Headers();
  if (wire === undefined || wire.protocol === "connect") {
    err.metadata.forEach((value, name) => header.set(name, value));
    header.set("content-type", protoConnect.contentTypeUnaryJson);
    return {
      status: protoConnect.codeToHttpStatus(err.code),
      header,
      body: createAsyncIterable([protoConnect.errorToJsonBytes(err, {})]),
    };
  }
  header.set("content-type", wire.contentType);
  if (wire.protocol === "grpc-web") {
    protoGrpc.setTrailerStatus(header, err);
    return { status: 200, header };
  }
  err.metadata.forEach((value, name) => header.set(name, value));
  return { status: 200, header, body: createAsyncIterable([]), trailer: withSpecGrpcMessage(protoGrpc.setTrailerStatus(new Headers(), err)) };
}

/**
 * grpc-message as gRPC's protocol encodes it: UTF-8 with only the bytes outside printable ASCII, and
 * '%', percent-encoded. Connect encodes it with encodeURIComponent, which also escapes ':' and ',';
 * grpc-js decodes with decodeURI, which leaves those escaped ("content%3A is required").
 */
export function grpcMessageEncoding(message: string): string {
  let out = "";
  for (const byte of Buffer.from(message, "utf8")) {
    out += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/** Re-encodes a gRPC trailer's grpc-message (as Connect wrote it) the protocol's way; returns the trailer. */
function withSpecGrpcMessage(trailer: Headers): Headers {
  const message = trailer.get("grpc-message");
  if (message !== null) trailer.set("grpc-message", grpcMessageEncoding(decodeURIComponent(message)));
  return trailer;
}

/**
 * A gRPC response from Connect's handler whose grpc-message, written to its trailer once the body has
 * ended, is re-encoded the protocol's way before the trailer is sent.
 */
export function withGrpcTrailerEncoding(wire: Wire | undefined, res: UniversalServerResponse): UniversalServerResponse {
  const { body, trailer } = res;
  if (wire?.protocol !== "grpc" || trailer === undefined || body === undefined) return res;
  async function* reencodedAtEnd(chunks: AsyncIterable<Uint8Array>, end: Headers) {
    yield* chunks;
    withSpecGrpcMessage(end);
  }
  return { ...res, body: reencodedAtEnd(body, trailer) };
}
