import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type stream from "node:stream";
import { joinRepeatedAuthorization } from "./headers.js";

// gRPC needs HTTP/2; browsers, curl and REST clients mostly speak HTTP/1.1, and h2c cannot upgrade
// from HTTP/1.1 without TLS. So one TCP listener reads the first bytes of each connection and hands it
// to the HTTP/2 server when they are the HTTP/2 preface, otherwise to the HTTP/1.1 server.
const preface = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

export interface OnePortOptions {
  /** Time given to in-flight requests when the server closes; then connections are cut. */
  graceMs: number;
  /** Answers an HTTP/1.1 request Node cannot parse (headers too large, malformed); Node's own answer has no body. */
  onClientError?: (err: NodeJS.ErrnoException, socket: stream.Duplex) => void;
}

/** A Fastify serverFactory serving HTTP/1.1 and h2c on one port, with a close that does not hang on keep-alive. */
export function onePortServer(opts: OnePortOptions) {
  // Fastify passes its validated options (defaults filled in), whose idle timeouts it applies only to servers it makes itself.
  return (handler: Handler, fastifyOptions: Record<string, unknown>): http.Server => {
    const timeouts = fastifyOptions as { keepAliveTimeout: number; http2SessionTimeout: number };
    const handle: Handler = (req, res) => {
      joinRepeatedAuthorization(req);
      handler(req, res);
    };
    const h1 = http.createServer(handle);
    // Fastify's 72 s, not Node's 5 s: a client (or a load balancer, AWS's idle timeout is 60 s) reusing
    // a connection the server has just closed as idle gets a reset instead of an answer.
    h1.keepAliveTimeout = timeouts.keepAliveTimeout;
    if (opts.onClientError) h1.on("clientError", opts.onClientError);
    const h2 = http2.createServer({}, handle as unknown as (req: http2.Http2ServerRequest, res: http2.Http2ServerResponse) => void);
    const sockets = new Set<net.Socket>();
    const sessions = new Set<http2.Http2Session>();
    h2.on("session", (session) => {
      sessions.add(session);
      session.once("close", () => sessions.delete(session));
      // Idle sessions are closed as Fastify's own HTTP/2 server closes them; Node's never are.
      session.setTimeout(timeouts.http2SessionTimeout, () => session.close());
    });

    const server = net.createServer((socket) => {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      let seen = Buffer.alloc(0);
      const sniff = (chunk: Buffer) => {
        seen = Buffer.concat([seen, chunk]);
        const n = Math.min(seen.length, preface.length);
        const isH2 = seen.subarray(0, n).equals(preface.subarray(0, n));
        if (isH2 && n < preface.length) return; // a short first read: wait for more
        socket.off("data", sniff);
        socket.pause();
        socket.unshift(seen);
        // The HTTP/2 session reads what is buffered on the socket itself; resuming here would
        // flush those bytes as 'data' events nobody listens to. HTTP/1.1 needs the resume.
        (isH2 ? h2 : h1).emit("connection", socket);
        if (!isH2) socket.resume();
      };
      socket.on("data", sniff);
      socket.on("error", () => socket.destroy());
    });
    // Node tracks an HTTP/1.1 server's connections (which closeIdleConnections() closes, and which its
    // header and request timeouts watch) from the server's 'listening' event; h1 never listens itself.
    server.on("listening", () => h1.emit("listening"));

    const closeListener = server.close.bind(server);
    server.close = (callback?: (err?: Error) => void) => {
      closeListener(callback);
      const drain = () => {
        h1.closeIdleConnections();
        for (const session of sessions) session.close();
      };
      drain();
      const poll = setInterval(drain, 25);
      const cut = setTimeout(() => {
        for (const socket of sockets) socket.destroy();
      }, opts.graceMs);
      server.once("close", () => {
        clearInterval(poll);
        clearTimeout(cut);
      });
      return server;
    };
    // Fastify only listens, reads the address and closes; net.Server provides all three.
    return server as unknown as http.Server;
  };
}
