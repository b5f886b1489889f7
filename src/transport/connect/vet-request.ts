import type { DescMethod } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Compression } from "@connectrpc/connect/protocol";
import { invalidRequest } from "../../errors/api-error.js";
import { decodeBinary, decodeJsonText } from "../decode-errors.js";
import { bodyTimeoutError, bodyTooLargeError } from "../body-errors.js";
import type { Wire } from "./wire.js";

// Connect-ES reports malformed requests outside our error model: binary parse failures as
// INTERNAL with the parser's message, framing and timeout-header problems without ErrorInfo, an
// unknown compression as UNIMPLEMENTED, and it waits forever for a body a client never finishes.
// So every unary call is read and checked here first, with the same decoders, and reaches
// Connect only when Connect will accept it.

export interface VetOptions {
  /** BODY_LIMIT_BYTES: the largest message, before and after decompression. */
  maxBytes: number;
  /** REQUEST_BODY_TIMEOUT_MS. */
  bodyTimeoutMs: number;
  compressions: Compression[];
}

const envelopeHeaderBytes = 5;
const compressedFlag = 0b1;
const utf8 = new TextDecoder();

/** Header problems Connect would reject before reading the body; undefined when it would accept them. */
export function vetHeaders(wire: Wire, header: Headers, opts: VetOptions): ConnectError | undefined {
  const encoding = header.get(wire.encodingHeader);
  if (encoding !== null && compressionOf(encoding, opts) === undefined) {
    const names = ["identity", ...opts.compressions.map((c) => c.name)].join(", ");
    return invalidRequest(wire.encodingHeader.toLowerCase(), "content_encoding", `must be one of ${names}`);
  }
  if (wire.parseTimeout(header.get(wire.timeoutHeader), Number.MAX_SAFE_INTEGER).error) {
    return invalidRequest(wire.timeoutHeader.toLowerCase(), "format", "is not a valid timeout");
  }
  return undefined;
}

/** The compression a header names: null for identity, undefined for one the server does not accept. */
function compressionOf(name: string | null, opts: VetOptions): Compression | null | undefined {
  if (name === null || name === "identity") return null;
  return opts.compressions.find((c) => c.name === name);
}

/**
 * Reads the whole body of a unary call within the deadline and checks that it is exactly one
 * message of the method's input type; returns its bytes as received, for Connect to decode again.
 */
export async function vetBody(
  wire: Wire,
  method: DescMethod,
  header: Headers,
  body: AsyncIterable<Uint8Array>,
  opts: VetOptions,
): Promise<Uint8Array> {
  const framed = wire.protocol !== "connect";
  const bytes = await readWithin(body, opts.maxBytes + (framed ? envelopeHeaderBytes : 0), opts.bodyTimeoutMs);
  const compression = compressionOf(header.get(wire.encodingHeader), opts) ?? null;
  let message = bytes;
  if (framed) {
    message = singleEnvelope(bytes);
    if (bytes[0]! & compressedFlag) {
      if (!compression) throw invalidRequest("body", "content_encoding", `is flagged compressed but ${wire.encodingHeader.toLowerCase()} names no compression`);
      message = await decompress(compression, message, opts.maxBytes);
    }
  } else if (compression) {
    message = await decompress(compression, message, opts.maxBytes);
  }
  if (wire.binary) decodeBinary(method.input, message);
  else decodeJsonText(method.input, utf8.decode(message));
  return bytes;
}

/** The payload of a body that must be one gRPC length-prefixed message, with no bytes before or after it. */
function singleEnvelope(bytes: Uint8Array): Uint8Array {
  if (bytes.length < envelopeHeaderBytes) {
    throw invalidRequest("body", "framing", "must be one length-prefixed message (a 5-byte header, then the message)");
  }
  const flags = bytes[0]!;
  if ((flags & ~compressedFlag) !== 0) throw invalidRequest("body", "framing", "has a message header with unknown flags");
  const length = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(1);
  const received = bytes.length - envelopeHeaderBytes;
  if (length > received) throw invalidRequest("body", "framing", `ended after ${received} of the ${length} bytes its message header announced`);
  if (length < received) throw invalidRequest("body", "framing", "holds more than one message; unary calls take exactly one");
  return bytes.subarray(envelopeHeaderBytes);
}

async function decompress(compression: Compression, bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  try {
    return await compression.decompress(bytes, maxBytes);
  } catch (err) {
    if (ConnectError.from(err).code === Code.ResourceExhausted) throw bodyTooLargeError();
    throw invalidRequest("body", "content_encoding", `is not valid ${compression.name} data`);
  }
}

/** Every chunk of the body, failing once it exceeds maxBytes or has not ended within timeoutMs. */
async function readWithin(body: AsyncIterable<Uint8Array>, maxBytes: number, timeoutMs: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(bodyTimeoutError(timeoutMs)), timeoutMs);
  });
  const it = body[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await Promise.race([it.next(), deadline]);
      if (next.done) break;
      total += next.value.byteLength;
      if (total > maxBytes) throw bodyTooLargeError();
      chunks.push(next.value);
    }
  } catch (err) {
    // Stops reading; the pending read settles when the stream is closed.
    void it.return?.().catch(() => undefined);
    if (err instanceof ConnectError) throw err;
    throw invalidRequest("body", "incomplete", "was cut off before it ended");
  } finally {
    clearTimeout(timer);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}
