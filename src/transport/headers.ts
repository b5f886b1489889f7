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
