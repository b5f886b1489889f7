import { availableParallelism, cpus, loadavg } from "node:os";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import type { PhaseResult } from "./stats.js";

export interface RunInfo {
  backend: "pglite" | "postgres";
  cores: number;
  node: string;
  cpu: string;
  /** Load average before the run: other work on the machine skews every number. */
  loadAvg1m: number;
  durationS: number;
  connections: number;
  startedAt: string;
}

/** What a throughput run ran on, read once before its first phase. */
export function runInfoOf(options: { databaseUrl: string | undefined; durationS: number; connections: number }): RunInfo {
  return {
    backend: options.databaseUrl ? "postgres" : "pglite",
    cores: availableParallelism(),
    node: process.version,
    cpu: cpus()[0]?.model ?? "unknown",
    loadAvg1m: loadavg()[0]!,
    durationS: options.durationS,
    connections: options.connections,
    startedAt: new Date().toISOString(),
  };
}

export const caveat =
  "Client and server share this machine's cores, so these numbers are a lower bound for the server alone.";

const ms = (v: number) => (Number.isNaN(v) ? "-" : v.toFixed(1));

const columns: Array<[string, (r: PhaseResult) => string]> = [
  ["phase", (r) => r.phase],
  ["data size", (r) => String(r.dataSize)],
  ["transport", (r) => r.transport],
  ["conc", (r) => String(r.concurrency)],
  ["req/s", (r) => r.reqPerS.toFixed(0)],
  ["memories/s", (r) => (r.memoriesPerS === undefined ? "" : r.memoriesPerS.toFixed(0))],
  ["p50 ms", (r) => ms(r.p50Ms)],
  ["p95 ms", (r) => ms(r.p95Ms)],
  ["p99 ms", (r) => ms(r.p99Ms)],
  ["errors", (r) => String(r.errors)],
];

/** The results as an aligned text table with the run's context above and the caveats below. */
export function formatTable(run: RunInfo, results: PhaseResult[]): string {
  const rows = [columns.map(([title]) => title), ...results.map((r) => columns.map(([, cell]) => cell(r)))];
  const widths = columns.map((_, c) => Math.max(...rows.map((row) => row[c]!.length)));
  // Text columns (phase, transport) align left, numbers right.
  const align = (cell: string, c: number) => (c === 0 || c === 2 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!));
  const line = (row: string[]) => row.map(align).join("  ");
  const errorKinds = results
    .filter((r) => r.errors > 0)
    .map((r) => `  ${r.phase} (${r.transport}): ${JSON.stringify(r.errorKinds)}`);
  return [
    `storage: ${run.backend}   cores: ${run.cores}   cpu: ${run.cpu}   node: ${run.node}`,
    `load average (1 min) before the run: ${run.loadAvg1m.toFixed(2)}`,
    `each timed phase: ${run.durationS} s, closed loop; latencies are of successful calls`,
    "",
    line(rows[0]!),
    line(widths.map((w) => "-".repeat(w))),
    ...rows.slice(1).map(line),
    "",
    ...(errorKinds.length > 0 ? ["errors by kind:", ...errorKinds, ""] : []),
    `Note: ${caveat}`,
  ].join("\n");
}

/** Writes the run and its results as JSON to `file`, creating its directory. */
export async function writeJson(file: string, run: RunInfo, results: PhaseResult[]): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ run: { ...run, caveat }, results }, null, 2) + "\n");
}
