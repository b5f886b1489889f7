import http from "node:http";
import { CallFailure } from "./closed-loop.js";

// node:http with a keep-alive agent rather than fetch: under a burst of concurrent large POSTs, fetch
// (undici) held some requests back for seconds on the client, which showed up as server latency.
const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
const timeoutMs = 30_000;

/** POSTs a JSON body and resolves with the status and the parsed response body. */
export function postJson(url: string, key: string, body: string): Promise<{ status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: "POST",
      agent,
      timeout: timeoutMs,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined });
      });
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(new Error(`no response in ${timeoutMs / 1000} s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** POSTs a JSON body with fetch and resolves with the parsed answer; an error answer throws a CallFailure. */
export async function postOrFail(url: string, key: string, body: unknown): Promise<any> {
  const res = await fetch(url, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(120_000),
  });
  if (!res.ok) throw new CallFailure(`HTTP ${res.status}: ${(await res.text()).slice(0, 300)}`);
  return res.json();
}
