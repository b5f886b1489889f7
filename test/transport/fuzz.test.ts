import type { DescMethod, DescService } from "@bufbuild/protobuf";
import http2 from "node:http2";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdminService } from "../../gen/agent/v1/admin_pb.js";
import { MemoryService } from "../../gen/agent/v1/memory_pb.js";
import { RecallService } from "../../gen/agent/v1/recall_pb.js";
import { StatsService } from "../../gen/agent/v1/stats_pb.js";
import { restRouteOf, type RestRoute } from "../../src/transport/rest/rest-route.js";
import { expectConnectError, expectGrpcError, expectRestError, grpcFrame } from "../support/error-model.js";
import { adminKey, startTestServer, type Backend, type TestServer } from "../support/test-server.js";
import { draw, jsonText, knownHostileStrings, messageBytes, messageJson, oddString, type Draw } from "./fuzz-corpus.js";

// Seeded, bounded fuzzing of every RPC over REST, Connect JSON, Connect binary, gRPC and gRPC-Web.
// Every answer must be a success or an error in the model (never a 5xx, INTERNAL or UNKNOWN), come
// before the stall bound, and leave the server ready with earlier data unchanged. The bound catches a
// request that holds the event loop (a quadratic step on hostile text takes minutes at these sizes), not
// slowness: answers take milliseconds on a quiet machine and up to ~2 s at load 30 here. Speed is
// measured by the benchmarks; linearity of the text functions by test/memories/linear-text.test.ts.

const answerWithinMs = 10_000;
const bodyLimit = 2 * 1024 * 1024;
// High limits: the fuzzer should reach the RPCs, not the rate limiter (whose answers are checked elsewhere).
const fuzzPlans = {
  fuzz: { memoriesStored: null, recallsPerMonth: null, costUnitsPerMonth: null, rate: { sustainedPerSecond: 100_000, burstPerSecond: 100_000, burstSeconds: 10, concurrency: 256 } },
};
const serverEnv = { BODY_LIMIT_BYTES: String(bodyLimit), PLANS: JSON.stringify(fuzzPlans), DEFAULT_PLAN: "fuzz" };

const services: DescService[] = [MemoryService, RecallService, StatsService, AdminService];
const methods = services.flatMap((s) => s.methods);
const routes = methods.map(restRouteOf).filter((r): r is RestRoute => r !== undefined);
const isAdmin = (m: DescMethod) => m.parent.typeName === AdminService.typeName;

type Transport = "rest" | "connect-json" | "connect-proto" | "grpc" | "grpc-web";
const transports: Transport[] = ["rest", "connect-json", "connect-proto", "grpc", "grpc-web"];

interface Outcome {
  label: string;
  ms: number;
  /** Whether the RPC succeeded: the corpus must reach past the front door, not only be refused there. */
  ok: boolean;
  check(): void;
}

/** Sends one request built from `d`; the outcome's check asserts its answer is in the model. */
type Send = (d: Draw, index: number) => Promise<Outcome>;

function keyFor(d: Draw, method: DescMethod, keys: { agent: string; admin: string }): string | undefined {
  const roll = d.random();
  if (roll < 0.04) return undefined;
  // Short enough for Node's 16 KiB header limit (error-model.test.ts covers requests beyond it).
  if (roll < 0.07) return "amk_" + oddString(d).slice(0, 200).replace(/[^\x21-\x7e]/g, "x");
  if (roll < 0.09) return isAdmin(method) ? keys.agent : keys.admin;
  return isAdmin(method) ? keys.admin : keys.agent;
}

async function timed<T>(run: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await run();
  return [value, performance.now() - started];
}

function restRequest(base: string, keys: { agent: string; admin: string }): Send {
  return async (d, index) => {
    const route = d.pick(routes);
    const json = messageJson(d, route.method.input, "rest");
    let path = route.path;
    for (const field of route.pathFields) {
      const raw = json[field.jsonName];
      delete json[field.jsonName];
      const text = typeof raw === "string" ? raw : JSON.stringify(raw ?? "");
      const segment = d.chance(0.1) ? d.pick(["%zz", "%", "a%2Fb", "..", "%F0%9F", "a".repeat(3000)]) : encodeURIComponent(text);
      path = path.replace(`{${field.jsonName}}`, segment || "x");
    }
    const query = new URLSearchParams();
    for (const field of route.queryFields) {
      const value = json[field.jsonName];
      delete json[field.jsonName];
      if (value === undefined) continue;
      for (const v of Array.isArray(value) ? value : [value]) query.append(field.jsonName, typeof v === "string" ? v : JSON.stringify(v));
    }
    if (d.chance(0.05)) query.append(d.pick(["unknown", "version", "limit"]), oddString(d));
    let method = route.verb.toUpperCase();
    if (d.chance(0.04)) method = d.pick(["HEAD", "OPTIONS", "PUT", "DELETE", "PATCH"]);
    const headers: Record<string, string> = {};
    const key = keyFor(d, route.method, keys);
    if (key) headers.authorization = `Bearer ${key}`;
    let body: string | Buffer | undefined;
    if (route.body !== undefined && method !== "GET" && method !== "HEAD") {
      const payload = route.body === "*" ? json : (json[route.body.jsonName] ?? {});
      body = jsonText(d, payload as Record<string, never>);
      headers["content-type"] = d.chance(0.9) ? "application/json" : d.pick(["text/plain", "application/json; charset=utf-8", "application/x-www-form-urlencoded", "application/json; charset=latin1"]);
      if (d.chance(0.03)) {
        body = gzipSync(body);
        headers["content-encoding"] = "gzip";
      }
      if (d.chance(0.01)) body = Buffer.alloc(bodyLimit + 1024, 0x20);
    }
    const url = `${base}${path}${query.size ? `?${query}` : ""}`;
    const label = `#${index} rest ${method} ${url.slice(0, 120)}`;
    const [res, ms] = await timed(async () => {
      const r = await fetch(url, { method, headers, body: body ?? null });
      return { status: r.status, headers: r.headers, text: await r.text() };
    });
    return {
      label,
      ms,
      ok: res.status < 300,
      check() {
        expect(res.status, `${label}: ${res.text.slice(0, 300)}`).toBeLessThan(500);
        expect(res.headers.get("x-ratelimit-limit"), `${label}: ${res.status}`).not.toBeNull();
        if (res.status >= 400 && method !== "HEAD") expectRestError(res.status, res.headers, res.text);
        else if (method !== "HEAD") JSON.parse(res.text);
      },
    };
  };
}

function connectRequest(base: string, keys: { agent: string; admin: string }, binary: boolean): Send {
  return async (d, index) => {
    const method = d.pick(methods);
    const json = messageJson(d, method.input, "proto");
    const body = binary ? messageBytes(d, method.input, json) : jsonText(d, json);
    const headers: Record<string, string> = { "content-type": binary ? "application/proto" : "application/json" };
    const key = keyFor(d, method, keys);
    if (key) headers.authorization = `Bearer ${key}`;
    if (d.chance(0.03)) headers["connect-timeout-ms"] = d.pick(["soon", "-1", "99999999999", "5000"]);
    if (d.chance(0.02)) headers["content-encoding"] = d.pick(["gzip", "br", "zstd", "identity"]);
    if (d.chance(0.02)) headers["connect-protocol-version"] = d.pick(["1", "2", ""]);
    const label = `#${index} connect ${binary ? "proto" : "json"} ${method.parent.name}/${method.name}`;
    const [res, ms] = await timed(async () => {
      const r = await fetch(`${base}/${method.parent.typeName}/${method.name}`, { method: "POST", headers, body });
      return { status: r.status, headers: r.headers, bytes: Buffer.from(await r.arrayBuffer()) };
    });
    return {
      label,
      ms,
      ok: res.status === 200,
      check() {
        expect(res.status, `${label}: ${res.bytes.toString().slice(0, 300)}`).toBeLessThan(500);
        expect(res.headers.get("x-ratelimit-limit"), label).not.toBeNull();
        if (res.status !== 200) expectConnectError(res.status, res.bytes.toString());
      },
    };
  };
}

/** gRPC over one HTTP/2 session, with frames written by hand: lying lengths, flags, mutated messages. */
function grpcRequest(session: () => http2.ClientHttp2Session, keys: { agent: string; admin: string }): Send {
  return async (d, index) => {
    const method = d.pick(methods);
    const message = messageBytes(d, method.input, messageJson(d, method.input, "proto"));
    let frame = grpcFrame(message);
    const roll = d.random();
    if (roll < 0.05) frame = grpcFrame(message, 0, message.length + 1 + d.int(1000));
    else if (roll < 0.08) frame = grpcFrame(message, d.pick([1, 2, 0x80]));
    else if (roll < 0.1) frame = Buffer.concat([frame, grpcFrame(message)]);
    else if (roll < 0.11) frame = frame.subarray(0, d.int(5));
    const headers: http2.OutgoingHttpHeaders = {
      ":method": "POST",
      ":path": `/${method.parent.typeName}/${method.name}`,
      "content-type": d.chance(0.95) ? "application/grpc" : d.pick(["application/grpc+json", "application/grpc+nope"]),
      te: "trailers",
    };
    const key = keyFor(d, method, keys);
    if (key) headers.authorization = `Bearer ${key}`;
    if (d.chance(0.04)) headers["grpc-timeout"] = d.pick(["soon", "1n", "5S", "999999999H", "10m"]);
    if (d.chance(0.03)) headers["grpc-encoding"] = d.pick(["gzip", "zstd", "identity", "gzip, br"]);
    const label = `#${index} grpc ${method.parent.name}/${method.name} (${frame.length} bytes)`;
    const [res, ms] = await timed(
      () =>
        new Promise<{ headers: http2.IncomingHttpHeaders; trailers: http2.IncomingHttpHeaders }>((resolve, reject) => {
          const stream = session().request(headers);
          let responseHeaders: http2.IncomingHttpHeaders = {};
          let trailers: http2.IncomingHttpHeaders = {};
          stream.on("response", (h) => (responseHeaders = h));
          stream.on("trailers", (t) => (trailers = t));
          stream.on("data", () => undefined);
          stream.on("error", reject);
          stream.on("close", () => resolve({ headers: responseHeaders, trailers }));
          stream.end(frame);
        }),
    );
    return {
      label,
      ms,
      ok: (res.trailers["grpc-status"] ?? res.headers["grpc-status"]) === "0",
      check() {
        const status = res.trailers["grpc-status"] !== undefined ? res.trailers : res.headers;
        expect(status["grpc-status"], `${label}: ${JSON.stringify(res.headers)}`).toBeDefined();
        if (status["grpc-status"] !== "0") expectGrpcError(status);
        expect(res.headers["x-ratelimit-limit"] ?? status["x-ratelimit-limit"], label).toBeDefined();
      },
    };
  };
}

/** gRPC-Web over HTTP/1.1: the status is in the headers (trailers-only) or in a trailer frame (flag 0x80). */
function grpcWebRequest(base: string, keys: { agent: string; admin: string }): Send {
  return async (d, index) => {
    const method = d.pick(methods);
    const message = messageBytes(d, method.input, messageJson(d, method.input, "proto"));
    const frame = d.chance(0.9) ? grpcFrame(message) : grpcFrame(message, 0, message.length + 7);
    const headers: Record<string, string> = { "content-type": "application/grpc-web+proto", "x-grpc-web": "1" };
    const key = keyFor(d, method, keys);
    if (key) headers.authorization = `Bearer ${key}`;
    const label = `#${index} grpc-web ${method.parent.name}/${method.name}`;
    const [res, ms] = await timed(async () => {
      const r = await fetch(`${base}/${method.parent.typeName}/${method.name}`, { method: "POST", headers, body: frame });
      return { status: r.status, headers: Object.fromEntries(r.headers), bytes: Buffer.from(await r.arrayBuffer()) };
    });
    const fields = res.headers["grpc-status"] !== undefined ? res.headers : grpcWebTrailer(res.bytes);
    return {
      label,
      ms,
      ok: fields["grpc-status"] === "0",
      check() {
        expect(res.status, label).toBe(200);
        if (fields["grpc-status"] !== "0") expectGrpcError(fields);
      },
    };
  };
}

function grpcWebTrailer(bytes: Buffer): http2.IncomingHttpHeaders {
  let at = 0;
  while (at + 5 <= bytes.length) {
    const flags = bytes[at]!;
    const length = bytes.readUInt32BE(at + 1);
    const data = bytes.subarray(at + 5, at + 5 + length);
    at += 5 + length;
    if (flags & 0x80) {
      const fields: http2.IncomingHttpHeaders = {};
      for (const line of data.toString().split("\r\n")) {
        const i = line.indexOf(":");
        if (i > 0) fields[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      return fields;
    }
  }
  return {};
}

/** Runs `count` requests drawn from the seed, `parallel` at a time; returns the outcomes in index order. */
async function fuzz(seed: number, count: number, parallel: number, senders: Record<Transport, Send>): Promise<Outcome[]> {
  const send = (i: number): Promise<Outcome> => {
    const transport = transports[i % transports.length]!;
    return senders[transport](draw(seed * 100_003 + i), i).catch((err: unknown) => ({
      label: `#${i} ${transport}`,
      ms: 0,
      ok: false,
      check: () => expect.fail(`#${i} ${transport}: no answer (${String(err)}, ${String((err as Error).cause)})`),
    }));
  };
  // One draw per request, seeded from the index: the corpus does not depend on the order answers arrive in.
  const outcomes: Outcome[] = new Array(count);
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      outcomes[i] = await send(i);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return outcomes;
}

const runs: Array<[Backend, number]> = [
  ["pglite", 2000],
  ["postgres", 300],
];

describe.each(runs)("fuzzing every RPC on every transport (%s, %i requests)", (backend, count) => {
  let server: TestServer;
  const keys = { agent: "", admin: adminKey };
  let session: http2.ClientHttp2Session | undefined;
  const h2 = () => {
    if (!session || session.closed || session.destroyed) {
      session = http2.connect(server.url);
      session.on("error", () => undefined);
    }
    return session;
  };
  const kept: Array<{ id: string; text: string }> = [];
  const read = async (id: string, key: string) => (await fetch(`${server.url}/api/v1/agent/memories/${id}`, { headers: { authorization: `Bearer ${key}` } })).text();
  let keptKey = "";

  beforeAll(async () => {
    server = await startTestServer(backend, serverEnv);
    keys.agent = await server.createKey("fuzz", "agent-1");
    // Data the fuzzer's keys cannot reach, read back byte for byte at the end.
    keptKey = await server.createKey("kept", "agent-1");
    for (const memory of [
      { content: "Deploys happen on Tuesdays", type: "directive", tags: ["ops"], metadata: { team: "infra", n: [1, 2, 3] } },
      { content: "Elena prefers written updates 📝", type: "preference", confidence: 0.7 },
      { content: "مرحبا — the Cairo office opens at 9", type: "fact", validFrom: "2026-01-31" },
    ]) {
      const res = await fetch(`${server.url}/api/v1/agent/memories`, {
        method: "POST",
        headers: { authorization: `Bearer ${keptKey}`, "content-type": "application/json" },
        body: JSON.stringify(memory),
      });
      expect(res.status).toBe(200);
      const id = ((await res.json()) as { ids: string[] }).ids[0]!;
      kept.push({ id, text: await read(id, keptKey) });
    }
  });
  afterAll(async () => {
    session?.close();
    await server?.close();
  });

  it("answers every request in the error model, none stalled, and stays ready with earlier data unchanged", async () => {
    const outcomes = await fuzz(backend === "pglite" ? 1 : 2, count, 4, {
      rest: restRequest(server.url, keys),
      "connect-json": connectRequest(server.url, keys, false),
      "connect-proto": connectRequest(server.url, keys, true),
      grpc: grpcRequest(h2, keys),
      "grpc-web": grpcWebRequest(server.url, keys),
    });
    for (const outcome of outcomes) outcome.check();
    // About a tenth of each transport's requests are valid enough to succeed (measured with these seeds).
    for (const transport of transports) {
      const sent = outcomes.filter((_, i) => transports[i % transports.length] === transport);
      expect(sent.filter((o) => o.ok).length, transport).toBeGreaterThan(sent.length * 0.03);
    }
    const slow = outcomes.filter((o) => o.ms > answerWithinMs).map((o) => `${o.label}: ${Math.round(o.ms)} ms`);
    expect(slow).toEqual([]);

    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    for (const { id, text } of kept) expect(await read(id, keptKey)).toBe(text);
  });
});

/**
 * Inputs whose handling other work changes: NUL and lone surrogates are to be refused with rules
 * nul_character / lone_surrogate, and token counting of a long run of one character is to be linear.
 * Kept apart from the corpus above so its failures name the cause.
 */
describe("known hostile strings (fixed by the NUL/surrogate and token-counter work)", () => {
  let server: TestServer;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer("pglite", serverEnv);
    key = await server.createKey("fuzz", "agent-1");
  });
  afterAll(async () => {
    await server?.close();
  });

  const create = async (fields: Record<string, unknown>) => {
    const [res, ms] = await timed(async () => {
      const r = await fetch(`${server.url}/api/v1/agent/memories`, {
        // Fails fast instead of waiting out a slow answer.
        signal: AbortSignal.timeout(answerWithinMs + 1000),
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ content: "A plain memory", type: "fact", ...fields }),
      });
      return { status: r.status, headers: r.headers, text: await r.text() };
    });
    return { ...res, ms };
  };

  it.each([
    ["content", { content: knownHostileStrings.nul }, "nul_character"],
    ["a tag", { tags: [knownHostileStrings.nul] }, "nul_character"],
    ["metadata", { metadata: { note: knownHostileStrings.nul } }, "nul_character"],
    ["content", { content: knownHostileStrings.loneHighSurrogate }, "lone_surrogate"],
    ["a tag", { tags: [knownHostileStrings.loneLowSurrogate] }, "lone_surrogate"],
    ["metadata", { metadata: { note: knownHostileStrings.loneHighSurrogate } }, "lone_surrogate"],
  ])("refuses a NUL or lone surrogate in %s with its rule", async (_where, fields, rule) => {
    const res = await create(fields);
    expect(res.status, res.text).toBe(400);
    expect(expectRestError(res.status, res.headers, res.text).details.rule).toBe(rule);
  });

  it("answers a memory whose content is one 16 KiB run of one character without stalling", async () => {
    const res = await create({ content: knownHostileStrings.longRun });
    expect(res.status, res.text).toBeLessThan(500);
    expect(res.ms).toBeLessThan(answerWithinMs);
  });

  it("answers the largest batch (one hundred 16 KiB memories of varied words)", async () => {
    // How long it holds the event loop is measured by `npx tsx bench/stall.ts`; test/memories/large-batch.test.ts
    // asserts how it is inserted.
    const memories = Array.from({ length: 100 }, (_, i) => ({ content: knownHostileStrings.variedWords(i + 1), type: "fact" }));
    const r = await fetch(`${server.url}/api/v1/agent/memories`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify({ memories }),
    });
    expect(r.status, (await r.text()).slice(0, 300)).toBe(200);
  });
});

/**
 * SKILL.md frontmatter shapes that held the event loop for 0.1-20 s before the pre-parse scan: each is
 * refused with a 400 naming `frontmatter` and the rule, over REST and Connect. The event loop delay is
 * measured around each request (the server runs in this process); the bound is generous for a loaded
 * machine, the measured worst on a quiet one is a few ms.
 */
describe("hostile SKILL.md frontmatter", () => {
  let server: TestServer;
  let key: string;
  const stallBoundMs = 250;

  beforeAll(async () => {
    server = await startTestServer("pglite", serverEnv);
    key = await server.createKey("fuzz", "agent-1");
  });
  afterAll(async () => {
    await server?.close();
  });

  const fm = (yaml: string) => `---\nname: hostile\ndescription: d\n${yaml}\n---\nbody\n`;
  const keys = (n: number, indent = "") => Array.from({ length: n }, (_, j) => `${indent}k${j}: v`).join("\n");
  const shapes: Array<[string, string, string]> = [
    ["6,500 top-level keys", fm(keys(6_500)), "max_keys"],
    ["4,000 keys under metadata", fm(`metadata:\n${keys(4_000, "  ")}`), "max_keys"],
    ["lists nested 30,000 deep", fm(`x: ${"[".repeat(30_000)}${"]".repeat(30_000)}`), "max_depth"],
    ["mappings nested 12,000 deep", fm(`x: ${"{a: ".repeat(12_000)}1${"}".repeat(12_000)}`), "max_depth"],
    ["5,000 aliases of one anchor", fm(`a: &a v\n${Array.from({ length: 5_000 }, (_, j) => `k${j}: *a`).join("\n")}`), "max_aliases"],
    ["20,000 tags", fm(`x: ${"!t ".repeat(20_000)}v`), "max_keys"],
  ];

  async function measured<T>(run: () => Promise<T>): Promise<[T, number]> {
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    try {
      const value = await run();
      // One more timer tick, so a block that ended with the answer is recorded.
      await new Promise((resolve) => setTimeout(resolve, 30));
      return [value, delay.max / 1e6];
    } finally {
      delay.disable();
    }
  }

  it.each(shapes)("refuses %s over REST and Connect with its rule, holding the event loop briefly", async (_shape, content, rule) => {
    const [res, restStallMs] = await measured(async () => {
      const r = await fetch(`${server.url}/api/v1/agent/skills/import`, {
        signal: AbortSignal.timeout(answerWithinMs),
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ content }),
      });
      return { status: r.status, headers: r.headers, text: await r.text() };
    });
    expect(res.status, res.text).toBe(400);
    expect(expectRestError(res.status, res.headers, res.text).details).toMatchObject({ field: "frontmatter", rule });
    expect(restStallMs).toBeLessThan(stallBoundMs);

    const [connect, connectStallMs] = await measured(async () => {
      const r = await fetch(`${server.url}/agent.v1.SkillService/ImportSkill`, {
        signal: AbortSignal.timeout(answerWithinMs),
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ content }),
      });
      return { status: r.status, text: await r.text() };
    });
    expect(connect.status, connect.text).toBe(400);
    expect(connect.text).toContain(rule);
    expectConnectError(connect.status, connect.text);
    expect(connectStallMs).toBeLessThan(stallBoundMs);
  });

  it("still imports a frontmatter with long scalars and many keys within the limits", async () => {
    const content = fm(`${keys(200)}\nlong: ${"y".repeat(30_000)}`);
    const [res, stallMs] = await measured(async () => {
      const r = await fetch(`${server.url}/api/v1/agent/skills/import`, {
        method: "POST",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ content }),
      });
      return { status: r.status, text: await r.text() };
    });
    expect(res.status, res.text).toBe(200);
    expect(JSON.parse(res.text).warnings).toHaveLength(201);
    expect(stallMs).toBeLessThan(stallBoundMs);
  });
});
