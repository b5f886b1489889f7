import type { IncomingHttpHeaders } from "node:http";

/** Node request headers as fetch Headers, without HTTP/2 pseudo-headers (":path"), which Headers rejects. */
export function requestHeaders(raw: IncomingHttpHeaders): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined || name.startsWith(":")) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}

/**
 * A request with more than one Authorization field must not be served with one of them, yet Node keeps
 * only the first in `headers` (HTTP/1.1 and HTTP/2 alike; `rawHeaders` has them all). So all of them are
 * joined with ", " (as RFC 9110 combines repeated fields), a value no `Bearer <key>` form matches: every
 * transport reading `headers` (REST, Connect, gRPC, MCP) then refuses the request as unauthenticated.
 */
export function joinRepeatedAuthorization(req: { rawHeaders: string[]; headers: IncomingHttpHeaders }): void {
  let values: string[] | undefined;
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (req.rawHeaders[i]!.toLowerCase() === "authorization") (values ??= []).push(req.rawHeaders[i + 1]!);
  }
  if (values !== undefined && values.length > 1) req.headers.authorization = values.join(", ");
}
