import type http from "node:http";
import http2 from "node:http2";

/**
 * Closes the connection (HTTP/1.1) or the stream (HTTP/2) of a request whose body was not read to
 * its end, once its response is sent: the client is still sending, and nothing will read it.
 * Call before the response headers are written.
 */
export function closeAfterResponse(req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void {
  if ("stream" in req) {
    // The stream's own 'finish': while its body is being read, the response emits no 'finish' and
    // Node leaves the stream open.
    const stream = req.stream;
    stream.once("finish", () => {
      if (!stream.closed) stream.close(http2.constants.NGHTTP2_NO_ERROR);
    });
  } else if (!res.headersSent) {
    (res as http.ServerResponse).setHeader("connection", "close");
  }
}
