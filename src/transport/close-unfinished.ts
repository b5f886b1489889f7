import type http from "node:http";
import http2 from "node:http2";

/**
 * Closes the connection (HTTP/1.1) or the stream (HTTP/2) of a request whose body was not read to
 * its end, once its response is sent: the client is still sending, and nothing will read it.
 * Call before the response headers are written.
 */
export function closeAfterResponse(req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void {
  if ("stream" in req) {
    // A compatibility response ends with trailers, sent on 'wantTrailers' by Node's own listener (the
    // first); the reset goes after them. Closed at the stream's 'finish', before them, gRPC clients
    // never got the call's status (grpc-js waited, or failed the call as INTERNAL).
    const stream = req.stream;
    stream.once("wantTrailers", () =>
      setImmediate(() => {
        if (!stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
      }),
    );
  } else if (!res.headersSent) {
    (res as http.ServerResponse).setHeader("connection", "close");
  }
}
