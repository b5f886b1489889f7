import type { ConnectError } from "@connectrpc/connect";
import { invalidRequest } from "../errors/api-error.js";

// The two ways a request body fails before it is read, the same on every transport.

export const bodyTooLargeError = (): ConnectError => invalidRequest("body", "max_size", "is larger than the request size limit");

export const bodyTimeoutError = (ms: number): ConnectError =>
  invalidRequest("body", "read_timeout", `was not received completely within ${ms} ms`);
