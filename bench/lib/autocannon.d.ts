// autocannon ships no types; this declares the part of its programmatic API the bench uses.
declare module "autocannon" {
  import type { EventEmitter } from "node:events";

  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string | Buffer;
    }

    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      /** Seconds before a request counts as timed out. */
      timeout?: number;
      headers?: Record<string, string>;
      requests?: Array<Request & { setupRequest?: (req: Request, context: object) => Request }>;
    }

    interface Instance extends EventEmitter {
      /** Emitted per response: the client, status code, bytes read and latency in ms. */
      on(event: "response", listener: (client: unknown, statusCode: number, bytes: number, ms: number) => void): this;
      /** Emitted per connection error or timeout. */
      on(event: "reqError", listener: (err: Error) => void): this;
    }
  }

  function autocannon(opts: autocannon.Options, cb: (err: Error | null) => void): autocannon.Instance;

  export = autocannon;
}
