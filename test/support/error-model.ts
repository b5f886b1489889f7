import { fromBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";
import { codeToHttpStatus } from "@connectrpc/connect/protocol-connect";
import http2 from "node:http2";
import net from "node:net";
import { expect } from "vitest";
import { ErrorInfoSchema, type ErrorInfo } from "../../gen/google/rpc/error_details_pb.js";
import { errorCodes, type ErrorCode } from "../../src/errors/codes.js";

// Checks that an answer is in the error model on each transport, with clients that share no code
// with the server's error rendering: raw HTTP/1.1 over a socket, raw HTTP/2 frames via node:http2.

const specCodes = Object.keys(errorCodes) as ErrorCode[];
const connectCodeNames: Record<number, string> = {
  3: "invalid_argument",
  5: "not_found",
  7: "permission_denied",
  8: "resource_exhausted",
  9: "failed_precondition",
  10: "aborted",
  13: "internal",
  16: "unauthenticated",
};

export interface RestErrorBody {
  code: ErrorCode;
  message: string;
  details: Record<string, string>;
}

/** A REST error answer: the spec's body and status, and the rate-limit headers of every /api/ answer. */
export function expectRestError(status: number, headers: Headers | http2.IncomingHttpHeaders, text: string): RestErrorBody {
  const body = JSON.parse(text) as { error: RestErrorBody };
  expect(Object.keys(body)).toEqual(["error"]);
  const { error } = body;
  expect(specCodes).toContain(error.code);
  expect(typeof error.message).toBe("string");
  expect(typeof error.details).toBe("object");
  expect(status).toBe(errorCodes[error.code].http);
  expect(header(headers, "x-ratelimit-limit")).toBeDefined();
  return error;
}

/** A Connect unary error answer: Connect's JSON error with our ErrorInfo detail and the matching status. */
export function expectConnectError(status: number, text: string): ErrorInfo & { code: string; message: string } {
  const body = JSON.parse(text) as { code: string; message: string; details?: Array<{ type: string; value: string }> };
  const detail = body.details?.find((d) => d.type === "google.rpc.ErrorInfo");
  expect(detail, `no ErrorInfo in ${text.slice(0, 300)}`).toBeDefined();
  const info = fromBinary(ErrorInfoSchema, Buffer.from(detail!.value, "base64"));
  expectInfo(info);
  const connectCode = errorCodes[info.reason as ErrorCode].connect;
  expect(body.code).toBe(connectCodeNames[connectCode]);
  expect(status).toBe(codeToHttpStatus(connectCode));
  return { ...info, code: body.code, message: body.message };
}

/** A gRPC status (from trailers, or headers of a trailers-only answer) carrying our ErrorInfo. */
export function expectGrpcError(fields: http2.IncomingHttpHeaders): ErrorInfo & { grpcStatus: number; message: string } {
  const grpcStatus = Number(fields["grpc-status"]);
  expect(grpcStatus).toBeGreaterThan(0);
  const bin = fields["grpc-status-details-bin"];
  expect(bin, `no grpc-status-details-bin (grpc-status ${grpcStatus}, ${String(fields["grpc-message"])})`).toBeDefined();
  const info = errorInfoOfStatus(Buffer.from(String(bin), "base64"));
  expectInfo(info);
  expect(grpcStatus).toBe(errorCodes[info.reason as ErrorCode].connect);
  return { ...info, grpcStatus, message: decodeURIComponent(String(fields["grpc-message"] ?? "")) };
}

function expectInfo(info: ErrorInfo) {
  expect(specCodes).toContain(info.reason);
  expect(info.domain).toBe("agentmem");
}

const header = (headers: Headers | http2.IncomingHttpHeaders, name: string): string | undefined =>
  headers instanceof Headers ? (headers.get(name) ?? undefined) : (headers[name] as string | undefined);

/** The ErrorInfo inside a google.rpc.Status (field 3: repeated Any, whose field 1 is the type URL and 2 the value). */
function errorInfoOfStatus(bytes: Uint8Array): ErrorInfo {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [field, wireType] = reader.tag();
    if (field !== 3) {
      reader.skip(wireType);
      continue;
    }
    const any = new BinaryReader(reader.bytes());
    let typeUrl = "";
    let value: Uint8Array = new Uint8Array();
    while (any.pos < any.len) {
      const [f, w] = any.tag();
      if (f === 1) typeUrl = any.string();
      else if (f === 2) value = any.bytes();
      else any.skip(w);
    }
    if (typeUrl.endsWith("/google.rpc.ErrorInfo")) return fromBinary(ErrorInfoSchema, value);
  }
  throw new Error("google.rpc.Status has no ErrorInfo detail");
}

/** A gRPC length-prefixed message. */
export function grpcFrame(message: Uint8Array, flags = 0, announcedLength = message.length): Buffer {
  const head = Buffer.alloc(5);
  head[0] = flags;
  head.writeUInt32BE(announcedLength, 1);
  return Buffer.concat([head, message]);
}

export interface H2Answer {
  status: number;
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  data: Buffer;
  /** Whether the server closed the stream (it ended, or reset it). */
  closed: boolean;
}

/**
 * One HTTP/2 request written by hand: `body` is sent, then the stream is ended unless `keepOpen`.
 * Resolves when the server has closed the stream.
 */
export function h2Request(baseUrl: string, headers: http2.OutgoingHttpHeaders, body: Uint8Array, opts: { keepOpen?: boolean } = {}): Promise<H2Answer> {
  return new Promise((resolve, reject) => {
    const session = http2.connect(baseUrl);
    session.on("error", reject);
    const stream = session.request({ ":method": "POST", ...headers }, { endStream: false });
    const answer: H2Answer = { status: 0, headers: {}, trailers: {}, data: Buffer.alloc(0), closed: false };
    stream.on("response", (h) => {
      answer.status = Number(h[":status"]);
      answer.headers = h;
    });
    stream.on("trailers", (t) => (answer.trailers = t));
    stream.on("data", (d: Buffer) => (answer.data = Buffer.concat([answer.data, d])));
    stream.on("error", () => undefined);
    stream.on("close", () => {
      answer.closed = true;
      session.close();
      resolve(answer);
    });
    if (opts.keepOpen) stream.write(body);
    else stream.end(body);
  });
}

export interface H1Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Writes `head` and `body` on a raw socket (so the request can lie about its length or stall) and
 * resolves with the response once the server has sent all of it and closed the connection.
 */
export function h1Raw(baseUrl: string, head: string, body: string | Buffer = ""): Promise<H1Answer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    socket.on("data", (d) => chunks.push(d));
    socket.on("error", reject);
    socket.on("close", () => resolve(parseH1(Buffer.concat(chunks).toString("utf8"))));
    socket.write(head.replace(/\n/g, "\r\n") + "\r\n");
    if (body.length) socket.write(body);
  });
}

function parseH1(raw: string): H1Answer {
  const split = raw.indexOf("\r\n\r\n");
  const [statusLine, ...lines] = raw.slice(0, split).split("\r\n");
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(":");
    headers[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.slice(split + 4);
  if (headers["transfer-encoding"] === "chunked") body = dechunk(body);
  return { status: Number(statusLine?.split(" ")[1]), headers, body };
}

function dechunk(text: string): string {
  let out = "";
  let rest = text;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    const size = parseInt(rest.slice(0, eol), 16);
    if (!size) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}
