// The publish-time safety scan on a labelled set: precision and recall of the critical class, and how
// long the scan of a large, hostile skill takes.
//
//   npx tsx bench/skill-scan.ts
//
// The set: every real skill of bench/data/skills and test/skills/fixtures (labelled clean: none may get
// a critical finding), and bench/data/skill-scan/variants.jsonl, real skills with one harmful line or
// file added (labelled critical) or a harmless look-alike (labelled clean). Writes
// bench/results/skill-scan.json.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { cpus } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { hasCritical, scanSkill, type ScanFinding, type ScannedFile } from "../src/skills/safety-scan.js";
import { runBench } from "./lib/run.js";
import { alignedTable } from "./lib/table.js";

const root = fileURLToPath(new URL("../", import.meta.url));

interface Labelled {
  name: string;
  origin: "real" | "variant";
  label: "critical" | "clean";
  files: ScannedFile[];
}

/** A skill directory's SKILL.md and bundled files; binary files have no text. */
function readSkillDir(dir: string): ScannedFile[] {
  const files: ScannedFile[] = [];
  const walk = (relative: string) => {
    for (const name of readdirSync(path.join(dir, relative)).sort()) {
      const rel = relative === "" ? name : `${relative}/${name}`;
      if (statSync(path.join(dir, rel)).isDirectory()) walk(rel);
      else {
        const bytes = readFileSync(path.join(dir, rel));
        files.push(bytes.includes(0) ? { path: rel } : { path: rel, text: bytes.toString("utf8") });
      }
    }
  };
  walk("");
  return files;
}

function realSkills(): Labelled[] {
  const benchDir = path.join(root, "bench/data/skills");
  const fixtures = path.join(root, "test/skills/fixtures");
  const dirs = readdirSync(benchDir, { withFileTypes: true }).filter((d) => d.isDirectory());
  const fromBench = dirs.map((d): Labelled => ({ name: d.name, origin: "real", label: "clean", files: readSkillDir(path.join(benchDir, d.name)) }));
  const fromFixtures = readdirSync(fixtures, { withFileTypes: true })
    .filter((d) => !d.name.startsWith("."))
    .map(
    (d): Labelled => ({
      name: `fixture:${d.name}`,
      origin: "real",
      label: "clean",
      files: d.isDirectory() ? readSkillDir(path.join(fixtures, d.name)) : [{ path: "SKILL.md", text: readFileSync(path.join(fixtures, d.name), "utf8") }],
    }),
  );
  return [...fromBench, ...fromFixtures];
}

interface Variant {
  name: string;
  base: string;
  file: string;
  inject: string;
  label: "critical" | "clean";
}

function variants(): Labelled[] {
  const lines = readFileSync(path.join(root, "bench/data/skill-scan/variants.jsonl"), "utf8").trim().split("\n");
  return lines.map((line) => {
    const v = JSON.parse(line) as Variant;
    const files = readSkillDir(path.join(root, "bench/data/skills", v.base));
    const changed =
      v.file === "SKILL.md"
        ? files.map((f) => (f.path === "SKILL.md" ? { ...f, text: `${f.text}\n${v.inject}` } : f))
        : [...files, { path: v.file, text: v.inject }];
    return { name: v.name, origin: "variant", label: v.label, files: changed };
  });
}

const nearMisses = "curl wget iwr eval exec base64 -d ~/.ssh ignore previous user webhook AKIA sk- \u0441 ";

/** A 4 MiB skill built to be slow: long lines of near-matches for every rule. */
function hostileSkill(): ScannedFile[] {
  const line = nearMisses.repeat(Math.ceil(64_000 / nearMisses.length));
  return [{ path: "SKILL.md", text: Array.from({ length: 64 }, () => line).join("\n") }];
}

/** The same 4 MiB as one line. */
function hostileLine(): ScannedFile[] {
  return [{ path: "SKILL.md", text: nearMisses.repeat(Math.ceil(4_000_000 / nearMisses.length)) }];
}

/** The scan's median time over five runs, and the longest the event loop waited for a timer meanwhile. */
async function timed(files: ScannedFile[]): Promise<{ ms: number; worstLoopDelayMs: number }> {
  const times: number[] = [];
  let worst = 0;
  for (let i = 0; i < 5; i++) {
    let last = performance.now();
    const ticker = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 1);
    const started = performance.now();
    await scanSkill(files);
    times.push(performance.now() - started);
    clearInterval(ticker);
  }
  return { ms: times.sort((a, b) => a - b)[2]!, worstLoopDelayMs: worst };
}

runBench(async () => {
  const set = [...realSkills(), ...variants()];
  const rows: Array<Labelled & { findings: ScanFinding[]; predicted: string }> = [];
  for (const s of set) {
    const findings = await scanSkill(s.files);
    rows.push({ ...s, findings, predicted: hasCritical(findings) ? "critical" : "clean" });
  }
  const tp = rows.filter((r) => r.label === "critical" && r.predicted === "critical").length;
  const fp = rows.filter((r) => r.label === "clean" && r.predicted === "critical").length;
  const fn = rows.filter((r) => r.label === "critical" && r.predicted === "clean").length;
  const falseCriticalOnReal = rows.filter((r) => r.origin === "real" && r.predicted === "critical").map((r) => r.name);
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);

  const byRule = new Map<string, number>();
  for (const f of rows.flatMap((r): ScanFinding[] => r.findings)) byRule.set(`${f.rule} (${f.severity})`, (byRule.get(`${f.rule} (${f.severity})`) ?? 0) + 1);

  const hostile = await timed(hostileSkill());
  const oneLine = await timed(hostileLine());
  const perSkill: number[] = [];
  for (const s of set) {
    const started = performance.now();
    await scanSkill(s.files);
    perSkill.push(performance.now() - started);
  }

  const counts = (origin: string, label: string) => rows.filter((r) => r.origin === origin && r.label === label).length;
  console.log(
    alignedTable(
      [
        ["set", "skills"],
        ["real skills (clean)", String(counts("real", "clean"))],
        ["harmful variants (critical)", String(counts("variant", "critical"))],
        ["harmless look-alikes (clean)", String(counts("variant", "clean"))],
      ],
      [0],
    ),
  );
  console.log();
  console.log(
    alignedTable([
      ["critical class", "TP", "FP", "FN", "precision", "recall", "false critical on real skills"],
      ["all", String(tp), String(fp), String(fn), precision.toFixed(3), recall.toFixed(3), String(falseCriticalOnReal.length)],
    ]),
  );
  const misses = rows.filter((r) => r.label !== r.predicted);
  for (const m of misses) console.log(`  ${m.label === "critical" ? "missed" : "false critical"}: ${m.name} ${m.findings.map((f) => f.rule).join(",")}`);
  console.log();
  console.log(alignedTable([["rule (severity)", "findings"], ...[...byRule].sort().map(([rule, n]) => [rule, String(n)])]));
  console.log();
  console.log(`scan time: median ${perSkill.sort((a, b) => a - b)[Math.floor(perSkill.length / 2)]!.toFixed(2)} ms per labelled skill`);
  console.log(
    alignedTable([
      ["4 MiB of near-misses", "scan ms (median of 5)", "worst event-loop wait ms"],
      ["64 lines of 64 KiB", hostile.ms.toFixed(0), hostile.worstLoopDelayMs.toFixed(0)],
      ["one line", oneLine.ms.toFixed(0), oneLine.worstLoopDelayMs.toFixed(0)],
    ]),
  );

  const out = path.join(root, "bench/results/skill-scan.json");
  await mkdir(path.dirname(out), { recursive: true });
  await writeFile(
    out,
    JSON.stringify(
      {
        machine: `${cpus().length} x ${cpus()[0]?.model ?? "?"}, Node ${process.versions.node}`,
        startedAt: new Date().toISOString(),
        skills: rows.length,
        critical: { tp, fp, fn, precision, recall },
        falseCriticalOnReal,
        findingsByRule: Object.fromEntries(byRule),
        hostile: { lines64: hostile, oneLine },
        results: rows.map((r) => ({ name: r.name, origin: r.origin, label: r.label, predicted: r.predicted, rules: r.findings.map((f) => `${f.rule}:${f.file}:${f.line}`) })),
      },
      null,
      2,
    ),
  );
  return recall === 1 && falseCriticalOnReal.length === 0 ? 0 : 1;
});
