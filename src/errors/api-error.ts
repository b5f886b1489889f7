import { create, fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { errorCodes, type ErrorCode } from "./codes.js";

export const errorDomain = "agentmem";

/** The one way to fail a request: a ConnectError carrying the spec code as google.rpc.ErrorInfo. */
export function apiError(code: ErrorCode, message: string, details: Record<string, string> = {}): ConnectError {
  const info = create(ErrorInfoSchema, { reason: code, domain: errorDomain, metadata: details });
  return new ConnectError(message, errorCodes[code].connect, undefined, [{ desc: ErrorInfoSchema, value: info }]);
}

export function invalidRequest(field: string, rule: string, message: string): ConnectError {
  return apiError("invalid_request", `${field}: ${message}`, { field, rule });
}

/** A not_found naming the id asked for; an id of any length arrives over gRPC, so the echo is cut short. */
export function notFound(what: string, id: string): ConnectError {
  const shown = id.length > maxEchoedId ? `${id.slice(0, maxEchoedId)}…` : id;
  return apiError("not_found", `${what} ${shown} does not exist`, { id: shown });
}

const maxEchoedId = 100;

const fallbackByConnectCode: Partial<Record<Code, ErrorCode>> = {
  [Code.InvalidArgument]: "invalid_request",
  [Code.Unauthenticated]: "auth_failed",
  [Code.PermissionDenied]: "forbidden",
  [Code.NotFound]: "not_found",
  [Code.ResourceExhausted]: "rate_limited",
};

export interface ErrorBody {
  code: ErrorCode;
  message: string;
  details: Record<string, string>;
}

/** Resolves any thrown value to the spec's error model; unknown failures become server_error without internals. */
export function describeError(err: unknown): ErrorBody {
  if (!(err instanceof ConnectError)) {
    return { code: "server_error", message: "internal server error", details: {} };
  }
  for (const detail of err.details) {
    const info =
      "desc" in detail
        ? detail.desc.typeName === ErrorInfoSchema.typeName
          ? (detail.value as { reason: string; metadata: Record<string, string> })
          : undefined
        : detail.type === ErrorInfoSchema.typeName
          ? fromBinary(ErrorInfoSchema, detail.value)
          : undefined;
    if (info && info.reason in errorCodes) {
      return { code: info.reason as ErrorCode, message: err.rawMessage, details: { ...info.metadata } };
    }
  }
  const code = fallbackByConnectCode[err.code];
  if (code === undefined) return { code: "server_error", message: "internal server error", details: {} };
  return { code, message: err.rawMessage, details: {} };
}

export const httpStatusOf = (code: ErrorCode): number => errorCodes[code].http;
