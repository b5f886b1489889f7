import autocannon from "autocannon";
import type { Recorder } from "./stats.js";

export interface RestLoad {
  url: string;
  key: string;
  connections: number;
  durationS: number;
  /** The i-th request of the phase; called for every request so bodies and paths can vary. */
  request(i: number): autocannon.Request;
}

/**
 * Drives one REST phase with autocannon (keep-alive HTTP/1.1, one request in flight per connection)
 * and records every response in `rec`. Returns the elapsed seconds.
 */
export function restLoad(load: RestLoad, rec: Recorder): Promise<number> {
  const start = process.hrtime.bigint();
  let next = 0;
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: load.url,
        connections: load.connections,
        duration: load.durationS,
        timeout: 30,
        headers: { authorization: `Bearer ${load.key}` },
        requests: [{ setupRequest: (req) => withRequest(req, load.request(next++)) }],
      },
      (err) => (err ? reject(err) : resolve(Number(process.hrtime.bigint() - start) / 1e9)),
    );
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status >= 200 && status < 300) rec.success(ms);
      else rec.failure(`HTTP ${status}`);
    });
    instance.on("reqError", (err) => rec.failure(err.message));
  });
}

function withRequest(defaults: autocannon.Request, req: autocannon.Request): autocannon.Request {
  const headers = { ...defaults.headers, ...req.headers, ...(req.body === undefined ? {} : { "content-type": "application/json" }) };
  return { ...defaults, ...req, headers };
}
