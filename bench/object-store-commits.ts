// What happens to LanceDB commits on an S3-compatible server that ignores conditional puts.
//
//   npx tsx bench/object-store-commits.ts [--rows 30] [--repeats 3]
//
// A bucket on s3rver 3.7.1 (loopback), one table, and 1, 2 or 3 writer processes started together, each
// adding --rows one-row batches (each add is a commit). Every add succeeds; the table's row count at the
// end says how many commits survived. Prints a table and writes bench/results/object-store-commits.json.

import { spawn } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { availableParallelism, cpus } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { connect } from "@lancedb/lancedb";
import { startS3Server } from "../test/support/s3-server.js";
import { onCleanUp, positiveOption, runBench } from "./lib/run.js";
import { alignedTable } from "./lib/table.js";

const resultsFile = path.join(path.dirname(fileURLToPath(import.meta.url)), "results", "object-store-commits.json");
const table = "commits";

/** A writer process: adds `rows` one-row batches to the table, then exits. */
async function writer(uri: string, storageOptions: Record<string, string>, name: string, rows: number): Promise<void> {
  const t = await (await connect(uri, { storageOptions })).openTable(table);
  for (let i = 0; i < rows; i++) await t.add([{ id: `${name}-${i}` }]);
}

/** Starts `writers` processes at once and returns the rows the table holds after they have all exited. */
async function round(uri: string, storageOptions: Record<string, string>, writers: number, rows: number): Promise<number> {
  const db = await connect(uri, { storageOptions });
  await db.createTable(table, [{ id: "seed" }], { mode: "overwrite" });
  const script = fileURLToPath(import.meta.url);
  const children = Array.from({ length: writers }, (_, w) =>
    spawn(process.execPath, ["--import", "tsx", script, "--writer", JSON.stringify({ uri, storageOptions, name: `w${w}`, rows })], { stdio: "inherit" }),
  );
  const codes = await Promise.all(children.map((c) => new Promise<number | null>((resolve) => c.once("exit", resolve))));
  if (codes.some((c) => c !== 0)) throw new Error(`a writer failed: exit codes ${codes.join(", ")}`);
  const kept = (await (await db.openTable(table)).countRows()) - 1;
  db.close();
  return kept;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { rows: { type: "string", default: "30" }, repeats: { type: "string", default: "3" }, writer: { type: "string" } } });
  if (values.writer) {
    const w = JSON.parse(values.writer) as { uri: string; storageOptions: Record<string, string>; name: string; rows: number };
    await writer(w.uri, w.storageOptions, w.name, w.rows);
    return 0;
  }
  const rows = positiveOption("rows", values.rows);
  const repeats = positiveOption("repeats", values.repeats);
  const s3 = await startS3Server();
  onCleanUp(s3.close);
  const results: Array<{ writers: number; added: number; kept: number[] }> = [];
  for (const writers of [1, 2, 3]) {
    const kept: number[] = [];
    for (let r = 0; r < repeats; r++) kept.push(await round(`s3://${s3.bucket}/round-${writers}-${r}`, s3.storageOptions, writers, rows));
    results.push({ writers, added: writers * rows, kept });
  }
  const run = { cores: availableParallelism(), cpu: cpus()[0]?.model ?? "unknown", node: process.version, rows, repeats, startedAt: new Date().toISOString() };
  console.log(
    [
      `LanceDB commits on s3rver 3.7.1 (no conditional puts): ${rows} one-row adds per writer process, ${repeats} rounds`,
      `cores: ${run.cores}   cpu: ${run.cpu}   node: ${run.node}`,
      "",
      alignedTable([["writers", "rows added", "rows kept, each round"], ...results.map((r) => [String(r.writers), String(r.added), r.kept.join(", ")])], []),
    ].join("\n"),
  );
  await mkdir(path.dirname(resultsFile), { recursive: true });
  await writeFile(resultsFile, JSON.stringify({ run, results }, null, 2) + "\n");
  console.log(`\nwritten to ${resultsFile}`);
  return 0;
}

runBench(main);
