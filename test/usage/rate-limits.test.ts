import http from "node:http";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StatsService } from "../../gen/agent/v1/stats_pb.js";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.js";
import { ConnectError } from "@connectrpc/connect";
import { grpc, grpcClient } from "../support/grpc-client.js";
import { adminKey, rest, startTestServer, type Backend, type TestServer } from "../support/test-server.js";
import { planEnv } from "./limits-env.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Repeats a request until its answer passes `done`, pausing 10 ms between tries so the polling stays
 * under the key's sustained rate (100 per second); the test's timeout bounds the wait.
 */
async function until<T>(request: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  for (;;) {
    const answer = await request();
    if (done(answer)) return answer;
    await sleep(10);
  }
}

interface HeldRequest {
  /** The status, once the server has answered (early: it refused the request). */
  answered(): number | undefined;
  /** Sends the rest of the body; resolves with the status. */
  end(rest: string): Promise<number>;
}

/** A JSON POST whose body has begun but not ended, so the server holds it in flight. */
function holdRequest(url: string, key: string, bodyStart: string): HeldRequest {
  const req = http.request(url, { method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" } });
  let status: number | undefined;
  const response = new Promise<number>((resolve, reject) => {
    req.on("response", (res) => {
      res.resume();
      res.on("end", () => resolve((status = res.statusCode!)));
    });
    req.on("error", reject);
  });
  req.write(bodyStart);
  req.flushHeaders();
  return {
    answered: () => status,
    end(rest) {
      req.end(rest);
      return response;
    },
  };
}
const rateHeaders = (h: Headers) => ({
  limit: Number(h.get("x-ratelimit-limit")),
  remaining: Number(h.get("x-ratelimit-remaining")),
  reset: Number(h.get("x-ratelimit-reset")),
});
const grpcRate = (m: grpc.Metadata) => ({
  limit: Number(m.get("x-ratelimit-limit")[0]),
  remaining: Number(m.get("x-ratelimit-remaining")[0]),
  reset: Number(m.get("x-ratelimit-reset")[0]),
});

const setups: Array<[Backend, "memory" | "postgres"]> = [
  ["pglite", "memory"],
  ["postgres", "postgres"],
];

describe.each(setups)("rate and concurrency limits (%s, %s store)", (backend, store) => {
  let server: TestServer;
  const admin = () => rest(server.url, adminKey);

  /** A key of a new workspace on `plan`. */
  async function keyOn(plan: string): Promise<string> {
    const workspace = `ws-${plan}-${Math.random().toString(36).slice(2, 8)}`;
    const key = await server.createKey(workspace, "agent-1");
    expect((await admin()("PUT", `/api/v1/admin/workspaces/${workspace}/plan`, { plan })).status).toBe(200);
    return key;
  }

  beforeAll(async () => {
    server = await startTestServer(backend, { ...planEnv, RATE_LIMIT_STORE: store });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("over REST: allows a burst, decreases Remaining, resets after Reset seconds, then refuses past the sustained budget", async () => {
    const call = rest(server.url, await keyOn("tight"));
    const burst = [];
    for (let i = 0; i < 4; i++) burst.push(await call("GET", "/api/v1/agent/stats"));
    expect(burst.map((r) => r.status)).toEqual([200, 200, 200, 200]);
    const seen = burst.map((r) => rateHeaders(r.headers));
    expect(seen.every((h) => h.limit === 4)).toBe(true);
    expect(seen[0]!.remaining).toBe(3);
    // The peak bucket refills 4 a second, so a slow machine may give some back between calls.
    seen.forEach((h, i) => expect(h.remaining).toBeGreaterThanOrEqual(3 - i));
    seen.forEach((h) => expect(h.remaining).toBeLessThanOrEqual(3));
    const reset = seen.at(-1)!.reset;
    expect(reset).toBeGreaterThanOrEqual(1);

    await sleep(reset * 1000 + 50);
    const afterReset = await call("GET", "/api/v1/agent/stats");
    expect(afterReset.status).toBe(200);
    expect(rateHeaders(afterReset.headers)).toMatchObject({ limit: 4, remaining: 3 });

    // 5 of the 8-token budget are spent; 3 more pass, then the 1/64 per second refill holds the key.
    for (let i = 0; i < 3; i++) expect((await call("GET", "/api/v1/agent/stats")).status).toBe(200);
    const refused = await call("GET", "/api/v1/agent/stats");
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: "rate_limited", details: { limit: "rate" } });
    expect(rateHeaders(refused.headers).remaining).toBe(0);
    const retryAfter = Number(refused.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(30);
    expect(refused.body.error.details.retryAfter).toBe(String(retryAfter));
    // Every endpoint counts and is refused alike, including paths with no route.
    const unknown = await call("GET", "/api/v1/agent/nothing-here");
    expect(unknown.status).toBe(429);
    expect(unknown.headers.get("x-ratelimit-remaining")).toBe("0");
  });

  it("over gRPC: the same limits, with the headers as response metadata and, on errors, trailers", async () => {
    const client = grpcClient(server.url, "StatsService", await keyOn("tight"));
    try {
      const outcomes = [];
      for (let i = 0; i < 4; i++) outcomes.push(await client.callWithMetadata("getStats", {}));
      expect(outcomes.map((o) => o.error)).toEqual([undefined, undefined, undefined, undefined]);
      const seen = outcomes.map((o) => grpcRate(o.headers));
      expect(seen[0]).toMatchObject({ limit: 4, remaining: 3 });
      // The peak bucket refills 4 a second, so a slow machine may give some back between calls.
      seen.forEach((h, i) => expect(h.remaining).toBeGreaterThanOrEqual(3 - i));
      seen.forEach((h) => expect(h.remaining).toBeLessThanOrEqual(3));

      await sleep(seen.at(-1)!.reset * 1000 + 50);
      const afterReset = await client.callWithMetadata("getStats", {});
      expect(grpcRate(afterReset.headers)).toMatchObject({ limit: 4, remaining: 3 });
      for (let i = 0; i < 3; i++) expect((await client.callWithMetadata("getStats", {})).error).toBeUndefined();

      const refused = await client.callWithMetadata("getStats", {});
      expect(refused.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(refused.error?.details).toMatch(/too many requests/);
      expect(grpcRate(refused.trailers).remaining).toBe(0);
      expect(Number(refused.trailers.get("retry-after")[0])).toBeGreaterThan(30);
    } finally {
      client.close();
    }
  });

  it("over Connect: the headers on success and on errors, with the spec code in ErrorInfo", async () => {
    const key = await keyOn("tight");
    const stats = createClient(StatsService, createConnectTransport({ baseUrl: server.url, httpVersion: "1.1" }));
    const headers = { authorization: `Bearer ${key}` };
    let first: Headers | undefined;
    await stats.getStats({}, { headers, onHeader: (h) => (first = h) });
    expect(rateHeaders(first!)).toMatchObject({ limit: 4, remaining: 3 });

    const res = await fetch(`${server.url}/agent.v1.StatsService/GetStats`, {
      method: "POST",
      headers: { ...headers, "content-type": "application/json" },
      body: "{}",
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-remaining")).toMatch(/^[0-2]$/);

    let err: ConnectError | undefined;
    for (let i = 0; i < 10 && !err; i++) {
      err = await stats.getStats({}, { headers }).then(() => undefined, (e: unknown) => ConnectError.from(e));
    }
    expect(err?.findDetails(ErrorInfoSchema)[0]).toMatchObject({ reason: "rate_limited", metadata: { limit: "rate" } });
    expect(err?.metadata.get("x-ratelimit-remaining")).toBe("0");
  });

  it("refuses a key's requests beyond its concurrency limit, on every transport", async () => {
    const key = await keyOn("narrow");
    const call = rest(server.url, key);
    // A create whose body is still arriving holds the key's one slot until its body ends. Probing with
    // requests of the same key races the held one for the slot: while a probe is in flight, the held
    // request is the one refused (with a 429 of its own; the limit works either way). So a refused held
    // request is replaced by a new one, and the probes stop at the first refusal, which proves the held
    // request is in: a barrier, where a fixed number of probes (about 200 ms) was a race.
    let held: HeldRequest;
    let busy: Awaited<ReturnType<typeof call>> | undefined;
    do {
      held = holdRequest(`${server.url}/api/v1/agent/memories`, key, '{"content": "slow');
      busy = await until(
        () => call("GET", "/api/v1/agent/stats"),
        (r) => r.status === 429 || held.answered() !== undefined,
      );
      if (busy.status !== 429) busy = undefined;
      else if (held.answered() !== undefined) busy = undefined; // both refused each other's slot: try again
    } while (!busy);
    expect(busy.body.error).toMatchObject({ code: "rate_limited", details: { limit: "concurrency", retryAfter: "1" } });
    expect(busy.headers.get("retry-after")).toBe("1");
    expect(busy.headers.get("x-ratelimit-limit")).toBe("500");

    const client = grpcClient(server.url, "StatsService", key);
    const viaGrpc = await client.callWithMetadata("getStats", {});
    client.close();
    expect(viaGrpc.error?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(viaGrpc.error?.details).toMatch(/concurrent/);

    expect(await held.end(' upload", "type": "fact"}')).toBe(200);
    // The slot is returned when the server closes the held response, which may follow the client's end.
    const free = await until(() => call("GET", "/api/v1/agent/stats"), (r) => r.status !== 429);
    expect(free.status).toBe(200);
  });

  it("limits requests without a valid key by client address, at the default plan's rate", async () => {
    const res = await rest(server.url, "amk_not-a-key")("GET", "/api/v1/agent/stats");
    expect(res.status).toBe(401);
    expect(rateHeaders(res.headers).limit).toBe(500);
    const noHeader = await fetch(`${server.url}/api/v1/agent/openapi.json`);
    expect(noHeader.status).toBe(401);
    expect(noHeader.headers.get("x-ratelimit-limit")).toBe("500");
    // Operational endpoints are not API endpoints.
    expect((await fetch(`${server.url}/healthz`)).headers.get("x-ratelimit-limit")).toBeNull();
  });
});

describe("RATE_LIMIT_STORE=off", () => {
  it("sends no rate-limit headers and limits nothing", async () => {
    const server = await startTestServer("pglite", { ...planEnv, RATE_LIMIT_STORE: "off" });
    try {
      const call = rest(server.url, await server.createKey("acme", "agent-1"));
      const res = await call("GET", "/api/v1/agent/stats");
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    } finally {
      await server.close();
    }
  });
});
