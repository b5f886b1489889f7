import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { cosine } from "../../src/search/scoring.js";
import { adminKey, freshPostgresDatabase, rest } from "../support/test-server.js";

// Shared by read-your-writes.*.test.ts (one file per deployment, so the two run in parallel).
// A memory is recallable by the next request after its create or edit was acknowledged, on any node and
// in every mode, before the indexer has caught up. The indexer is held back deterministically: every node
// runs with INDEXER_ENABLED=false, and the test drains the outbox itself (app.indexer.drain()) only where
// it wants memories in the index, so recalls see a mix of indexed memories and pending writes.
// Contradiction detection is off: facts of one kind about different names ("plays tennis with X" / "with
// Y") would shadow each other, which is beside the point here; the write path embeds without it.

// Statement and paraphrase of 20 kinds of facts, each about a made-up name (its unique keyword).
const kinds: Array<[(x: string) => string, (x: string) => string]> = [
  [(x) => `The ${x} service writes its logs to the cold storage bucket`, (x) => `where does ${x} keep its log files?`],
  [(x) => `${x} is the code name of the billing migration project`, (x) => `what is the project called ${x} about?`],
  [(x) => `Dr. ${x} is the user's dentist and works on Tuesdays`, (x) => `who looks after the user's teeth, ${x}?`],
  [(x) => `The user's cat ${x} is allergic to chicken`, (x) => `what can the pet ${x} not eat?`],
  [(x) => `Deploys of ${x} need approval from the security team`, (x) => `who must sign off a release of ${x}?`],
  [(x) => `The ${x} dashboard shows the error rate of the checkout API`, (x) => `which chart tracks checkout failures, ${x}?`],
  [(x) => `${x} bakery sells the best sourdough bread in town`, (x) => `where can I buy good bread, ${x}?`],
  [(x) => `The wifi network ${x} is reserved for guests`, (x) => `can visitors use the ${x} wireless?`],
  [(x) => `${x} is the user's favourite science fiction novel`, (x) => `which book about space does the user love, ${x}?`],
  [(x) => `Backups of the ${x} database run every night at two`, (x) => `when is ${x} data backed up?`],
  [(x) => `The user plays tennis with ${x} on Sunday mornings`, (x) => `who is the weekend sports partner ${x}?`],
  [(x) => `${x} Airlines lost the user's luggage last spring`, (x) => `which carrier misplaced the suitcase, ${x}?`],
  [(x) => `The ${x} library parses PDF invoices into JSON`, (x) => `what tool turns bills into structured data, ${x}?`],
  [(x) => `Meetings with the ${x} team start at nine sharp`, (x) => `what time does the ${x} group meet?`],
  [(x) => `The user prefers the ${x} font for code editors`, (x) => `which typeface does the user like for programming, ${x}?`],
  [(x) => `${x} is the staging cluster in the Frankfurt region`, (x) => `which test environment runs in Germany, ${x}?`],
  [(x) => `The user's sister ${x} lives near the harbour`, (x) => `where is the home of the sibling ${x}?`],
  [(x) => `Invoices from ${x} must be paid within thirty days`, (x) => `what is the payment deadline for ${x}?`],
  [(x) => `The ${x} restaurant serves vegan ramen on Fridays`, (x) => `where is plant-based noodle soup served, ${x}?`],
  [(x) => `Passwords for ${x} rotate every ninety days`, (x) => `how often do ${x} credentials change?`],
];
// What the edits say: kinds of their own, so no kind ever has more memories than a recall returns (10).
const editKinds: Array<[(x: string) => string, (x: string) => string]> = [
  [(x) => `The ${x} printer on the third floor jams with glossy paper`, (x) => `which office printer has trouble with photo paper, ${x}?`],
  [(x) => `${x} is the user's accountant and files the taxes in April`, (x) => `who handles the user's tax returns, ${x}?`],
  [(x) => `The ${x} cron job deletes temporary files every hour`, (x) => `what cleans up scratch files, ${x}?`],
  [(x) => `The user ran the ${x} marathon in under four hours`, (x) => `which long-distance race did the user finish, ${x}?`],
  [(x) => `${x} hotel has a rooftop pool and free breakfast`, (x) => `where can I stay with a swimming pool on the roof, ${x}?`],
  [(x) => `The ${x} feature flag hides the new checkout page`, (x) => `which toggle controls the redesigned payment screen, ${x}?`],
  [(x) => `The user's grandmother ${x} turns ninety in June`, (x) => `whose ninetieth birthday is coming up, ${x}?`],
  [(x) => `${x} is the vendor that supplies our laptops`, (x) => `who provides the company notebooks, ${x}?`],
  [(x) => `The ${x} queue retries failed emails three times`, (x) => `how often are undelivered messages resent by ${x}?`],
  [(x) => `The user learned to sail on lake ${x} as a child`, (x) => `where did the user first go sailing, ${x}?`],
  [(x) => `${x} gym opens at six in the morning`, (x) => `when can the user start working out at ${x}?`],
  [(x) => `The ${x} endpoint returns the user's order history`, (x) => `which endpoint lists the orders the user placed before, ${x}?`],
  [(x) => `The user's landlord ${x} fixes the heating slowly`, (x) => `who takes ages to repair the radiator, ${x}?`],
  [(x) => `${x} is the conference where the user gave a keynote`, (x) => `at which event did the user give the main talk, ${x}?`],
  [(x) => `The ${x} garden grows tomatoes and basil`, (x) => `where are the vegetables and herbs planted, ${x}?`],
  [(x) => `The ${x} load balancer terminates TLS for the public site`, (x) => `what handles HTTPS certificates in front of the website, ${x}?`],
  [(x) => `The user's nephew ${x} studies chemistry in Leeds`, (x) => `which relative is at university for science, ${x}?`],
  [(x) => `${x} pharmacy delivers prescriptions on weekends`, (x) => `who brings medicine on Saturdays, ${x}?`],
  [(x) => `The ${x} spreadsheet tracks the team's vacation days`, (x) => `where are holidays of the team recorded, ${x}?`],
  [(x) => `The user bought the ${x} bicycle second hand`, (x) => `which bike did the user get used, ${x}?`],
];
const syllables = ["ka", "lo", "mi", "ru", "te", "zo", "vi", "ne", "sa", "du", "fe", "po", "gi", "ba"];
/** A made-up single-word name, distinct for every n below 14^3. */
const nameOf = (n: number) => `${syllables[n % 14]}${syllables[Math.floor(n / 14) % 14]}${syllables[Math.floor(n / 196) % 14]}x`.replace(/^./, (c) => c.toUpperCase());

const count = 100;
const chunk = 25;
const fact = (i: number) => ({ name: nameOf(i), kind: i % kinds.length });
/** An edit changes the kind and the name, so neither the old keyword nor the old meaning should find it. */
const edited = (i: number) => ({ name: nameOf(1000 + i), kind: i % editKinds.length, edit: true });
type Fact = { name: string; kind: number; edit?: boolean };
const statement = (f: Fact) => (f.edit ? editKinds : kinds)[f.kind]![0](f.name);
const paraphrase = (f: Fact) => (f.edit ? editKinds : kinds)[f.kind]![1](f.name);

const nodeConfig = (env: Record<string, string>) =>
  loadConfig({ PORT: "0", HOST: "127.0.0.1", LOG_LEVEL: "warn", AGENTMEM_ADMIN_KEY: adminKey, DATA_DIR: "memory://", EMBEDDING_WORKERS: "1", INDEXER_ENABLED: "false", CONTRADICTIONS_ENABLED: "false", ...env });

export interface Setup {
  nodes: App[];
  close(): Promise<void>;
}

export async function oneNodeOnPglite(): Promise<Setup> {
  const node = await startApp(nodeConfig({}));
  return { nodes: [node], close: () => node.close() };
}

export async function twoNodesOnPostgres(): Promise<Setup> {
  const database = await freshPostgresDatabase();
  const lanceDir = await mkdtemp(path.join(os.tmpdir(), "agentmem-ryw-"));
  const config = nodeConfig({ DATABASE_URL: database.url, LANCEDB_URI: lanceDir });
  const nodes = [await startApp(config), await startApp(config)];
  return {
    nodes,
    async close() {
      await Promise.all(nodes.map((n) => n.close()));
      await database.drop();
      await rm(lanceDir, { recursive: true, force: true });
    },
  };
}

/** The read-your-writes checks against one deployment. */
export function readYourWrites(name: string, setUp: () => Promise<Setup>): void {
  describe(`read-your-writes (${name})`, () => {
    let setup: Setup;
    let key: string;
    const ids: string[] = [];
    /** Writes go to node i % n and the recalls that follow to the next node. */
    const writer = (i: number) => rest(setup.nodes[i % setup.nodes.length]!.url, key);
    const reader = (i: number) => rest(setup.nodes[(i + 1) % setup.nodes.length]!.url, key);
    const recall = async (i: number, body: Record<string, unknown>) => {
      const res = await reader(i)("POST", "/api/v1/agent/recall", { limit: 10, ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body.memories as Array<{ id: string; content: string; similarity: number }>;
    };
    const drain = () => setup.nodes[0]!.indexer.drain();
    const queued = async () => (await setup.nodes[0]!.db.query<{ n: number }>("select count(*)::int as n from index_outbox"))[0]!.n;

    beforeAll(async () => {
      setup = await setUp();
      const admin = rest(setup.nodes[0]!.url, adminKey);
      key = (await admin("POST", "/api/v1/admin/keys", { workspace: "acme", container: "agent-1" })).body.key;
    });
    afterAll(async () => {
      await setup?.close();
    });

    it.each(Array.from({ length: count / chunk }, (_, c) => c))("finds each create at once by keyword and by meaning (chunk %i)", async (c) => {
      for (let i = c * chunk; i < (c + 1) * chunk; i++) {
        const f = fact(i);
        const created = await writer(i)("POST", "/api/v1/agent/memories", { content: statement(f), type: "fact", metadata: { n: i } });
        expect(created.status, JSON.stringify(created.body)).toBe(200);
        ids[i] = created.body.ids[0];
        expect((await recall(i, { query: f.name, searchMode: "keyword" })).map((m) => m.id), `keyword ${f.name}`).toContain(ids[i]);
        expect((await recall(i, { query: paraphrase(f), searchMode: "semantic" })).map((m) => m.id), `semantic ${paraphrase(f)}`).toContain(ids[i]);
        if (i % 5 === 0) expect((await recall(i, { query: paraphrase(f) })).map((m) => m.id), `hybrid ${paraphrase(f)}`).toContain(ids[i]);
      }
      // The next chunk's recalls search these in the index, beside its own pending writes.
      await drain();
      expect(await queued()).toBe(0);
    });

    it.each(Array.from({ length: count / chunk }, (_, c) => c))("finds each edit's new content at once, and not the old (chunk %i)", async (c) => {
      const model = setup.nodes[0]!.model;
      for (let i = c * chunk; i < (c + 1) * chunk; i++) {
        const [before, after] = [fact(i), edited(i)];
        const patched = await writer(i)("PATCH", `/api/v1/agent/memories/${ids[i]}`, { content: statement(after) });
        expect(patched.status, JSON.stringify(patched.body)).toBe(200);
        expect((await recall(i, { query: after.name, searchMode: "keyword" })).map((m) => m.id), `keyword ${after.name}`).toContain(ids[i]);
        expect((await recall(i, { query: before.name, searchMode: "keyword" })).map((m) => m.id), `old keyword ${before.name}`).not.toContain(ids[i]);
        expect((await recall(i, { query: paraphrase(after), searchMode: "semantic" })).map((m) => m.id), `semantic ${paraphrase(after)}`).toContain(ids[i]);
        // By meaning, the memory is scored by its new content only: its similarity to the old paraphrase is
        // the cosine with the new content's vector (the index still holds the old one). Every fifth edit.
        if (i % 5 !== 0) continue;
        const [old] = await recall(i, { query: paraphrase(before), searchMode: "semantic", metadata: { n: i } });
        const [q, content] = await model.embed([paraphrase(before), statement(after)]);
        expect(old?.id).toBe(ids[i]);
        expect(old!.similarity).toBeCloseTo(cosine(q!, content!), 3);
      }
    });

    // Words most of the workspace's memories hold ("user", "team") weigh as little before indexing as after:
    // counted among pending memories alone they weighed as rare words, and a fresh memory holding them
    // outranked older, better matches.
    it("scores a pending memory by keyword as the index scores it once indexed", async () => {
      const bm25Of = async (i: number) => {
        const [m] = await recall(i, { query: "the user and the team", searchMode: "keyword", includeReceipt: true, metadata: { probe: true } });
        expect(m, "the probe memory is recalled").toBeDefined();
        return (m as unknown as { why: { bm25: number } }).why.bm25;
      };
      const created = await writer(0)("POST", "/api/v1/agent/memories", { content: "The user told the team about the spring review", type: "fact", metadata: { probe: true } });
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const pending = await bm25Of(0);
      await drain();
      await setup.nodes[0]!.vectors.optimize();
      const indexed = await bm25Of(0);
      expect(indexed).toBeGreaterThan(0);
      // Counted among the pending memories alone, the pending score was 2.2 times the indexed one.
      expect(pending / indexed).toBeGreaterThan(0.9);
      expect(pending / indexed).toBeLessThan(1.1);
    });
  });
}
