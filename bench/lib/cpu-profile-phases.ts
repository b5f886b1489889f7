// Sums a V8 CPU profile's samples by phase: the source file of ours (under `srcUrl`) nearest the sampled
// frame on its stack, else the package whose code is nearest (`(lib name)`), else what the stack starts
// with (a timer, the microtask queue, the garbage collector). Idle time is left out.

interface ProfileNode {
  id: number;
  callFrame: { url: string; functionName: string };
  children?: number[];
}
export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const special = new Map([
  ["(garbage collector)", "(gc)"],
  ["(program)", "(program)"],
  ["(root)", "(root)"],
  ["(idle)", "(idle)"],
]);

export function cpuByPhase(profile: CpuProfile, srcUrl: string): { byPhase: Map<string, number>; totalUs: number } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // Per node: the nearest own source file on its stack, and the nearest package.
  const ours = new Map<number, string | null>();
  const pkg = new Map<number, string | null>();
  const walk = (id: number): void => {
    if (ours.has(id)) return;
    const n = byId.get(id)!;
    const up = parent.get(id);
    if (up !== undefined) walk(up);
    const url = n.callFrame.url;
    const lib = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    ours.set(id, url.startsWith(srcUrl) ? url.slice(srcUrl.length).replace(/\.(ts|mjs|js)$/, "") : up === undefined ? null : ours.get(up)!);
    pkg.set(id, lib ? `(lib ${lib})` : up === undefined ? null : pkg.get(up) ?? (url.startsWith("node:") ? `(${url})` : null));
  };
  const byPhase = new Map<string, number>();
  let totalUs = 0;
  profile.samples.forEach((id, i) => {
    walk(id);
    const fn = byId.get(id)!.callFrame.functionName;
    const phase = special.get(fn) ?? ours.get(id) ?? pkg.get(id) ?? `(native ${fn || "anonymous"})`;
    if (phase === "(idle)") return;
    const us = profile.timeDeltas[i] ?? 0;
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + us);
    totalUs += us;
  });
  return { byPhase, totalUs };
}

/** The stage of a create a phase belongs to, for a short table. */
const stages: Array<[string, RegExp]> = [
  ["Postgres (PGlite statements)", /^\(lib @electric-sql\/pglite\)|^db\//],
  ["contradiction finder and rules", /^memories\/contradictions\/|^\(lib (compromise|wink|efrt)/],
  ["vector index (LanceDB calls, Arrow)", /^search\/vector\/|^\(lib (@lancedb|apache-arrow|flatbuffers)/],
  ["embedding (model-process IPC, caches)", /^embeddings\/|^\(node:internal\/child_process\)/],
  ["token counting", /^recall\/tokens|^\(lib (js-tiktoken|gpt-tokenizer|tiktoken)/],
  ["usage meter", /^usage\//],
  ["create logic (duplicates, receipts, grouping)", /^memories\//],
  ["HTTP, routing, decoding, validation, auth, logs", /^transport\/|^validation|^accounts\/|^observability\/|^\(node:_http|^\(lib (fastify|pino|light-my-request|find-my-way|@bufbuild|@connectrpc)/],
  ["garbage collection", /^\(gc\)/],
];

export function byStage(byPhase: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [phase, us] of byPhase) {
    const stage = stages.find(([, re]) => re.test(phase))?.[0] ?? "other (event loop, timers, Node internals)";
    out.set(stage, (out.get(stage) ?? 0) + us);
  }
  return out;
}
