// The second process of bench/stall.ts: pings GET <url>/healthz every --interval ms (open loop: a ping is
// sent on every tick whether or not the last one has answered, so a stalled server shows as many slow pings,
// not one) and reports each ping to its parent over IPC as [sentAt, latencyMs, status], sentAt on the clock
// both processes share (performance.timeOrigin + performance.now(), ms since the epoch). Plain JavaScript run
// by node itself, so nothing but these timers runs on its event loop.
//
//   node bench/lib/healthz-pinger.mjs <url> [intervalMs=10] [timeoutMs=60000]
//
// Messages from the parent: {type: "barrier", id, at}: answered with {type: "barrier", id} once every ping
// sent at or before `at` has answered or timed out (status 0, latency = the time it waited).

import http from "node:http";

const [url, intervalArg = "10", timeoutArg = "60000"] = process.argv.slice(2);
if (!url || !process.send) {
  console.error("usage: node bench/lib/healthz-pinger.mjs <url> [intervalMs] [timeoutMs] (as a child with IPC)");
  process.exit(2);
}
const intervalMs = Number(intervalArg);
const timeoutMs = Number(timeoutArg);
const now = () => performance.timeOrigin + performance.now();
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 64 });
const target = new URL("/healthz", url);
/** Send times of the pings not answered yet. */
const pending = new Set();
/** Barriers waiting for pings sent at or before their time. */
let barriers = [];

function settle(sentAt, status) {
  // After a stop, the pings the agent's destroy cuts short have no one to report to.
  if (!pending.delete(sentAt) || !process.connected) return;
  process.send([sentAt, now() - sentAt, status]);
  releaseBarriers();
}

function releaseBarriers() {
  if (barriers.length === 0) return;
  let oldest = Infinity;
  for (const t of pending) if (t < oldest) oldest = t;
  barriers = barriers.filter((b) => {
    if (oldest <= b.at) return true;
    process.send({ type: "barrier", id: b.id });
    return false;
  });
}

function ping() {
  const sentAt = now();
  pending.add(sentAt);
  const req = http.get(target, { agent, timeout: timeoutMs }, (res) => {
    res.resume();
    res.on("end", () => settle(sentAt, res.statusCode ?? 0));
    res.on("error", () => settle(sentAt, 0));
  });
  req.on("timeout", () => req.destroy(new Error("timeout")));
  req.on("error", () => settle(sentAt, 0));
}

const timer = setInterval(ping, intervalMs);
process.on("message", (msg) => {
  if (msg && msg.type === "barrier") {
    barriers.push({ id: msg.id, at: msg.at });
    releaseBarriers();
  } else if (msg && msg.type === "stop") {
    clearInterval(timer);
    agent.destroy();
    process.disconnect();
  }
});
process.on("disconnect", () => {
  clearInterval(timer);
  agent.destroy();
});
