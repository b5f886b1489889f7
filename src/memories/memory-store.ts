import type { JsonObject } from "@bufbuild/protobuf";
import { setImmediate as nextTurn } from "node:timers/promises";
import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import { jsonRows, type JsonRow } from "../db/json-rows.js";
import { vectorToBase64 } from "../search/vector/records.js";
import { contentHash } from "./content-hash.js";
import type { MemoryDraft } from "./memory-rules.js";

/** One version of a memory as stored: its validated fields plus identity, state and history. */
export interface MemoryRecord extends MemoryDraft {
  id: string;
  workspaceId: string;
  /** active | shadowed. */
  state: string;
  /** The memory that replaced this one, and when; null while active. */
  supersededBy: string | null;
  supersededAt: Date | null;
  version: number;
  keyId: string;
  /** Creation of the memory (version 1). */
  createdAt: Date;
  /** Creation of this version. */
  updatedAt: Date;
  /** cl100k_base tokens of the content, counted once when the version is written; null for versions written before they were stored. */
  contentTokens: number | null;
}

export interface MemoryRow {
  id: string;
  workspace_id: string;
  content: string;
  type: string;
  containers: string[];
  tags: string[];
  source: string;
  valid_from: Date;
  valid_until: Date | null;
  metadata: JsonObject;
  confidence: number;
  severity: string | null;
  state: string;
  superseded_by: string | null;
  superseded_at: Date | null;
  version: number;
  key_id: string;
  created_at: Date;
  updated_at: Date;
  content_tokens: number | null;
}

export const recordOf = (r: MemoryRow): MemoryRecord => ({
  id: r.id,
  workspaceId: r.workspace_id,
  content: r.content,
  type: r.type,
  containers: r.containers,
  tags: r.tags,
  source: r.source,
  validFrom: r.valid_from,
  validUntil: r.valid_until,
  metadata: r.metadata,
  confidence: r.confidence,
  severity: r.severity,
  state: r.state,
  supersededBy: r.superseded_by,
  supersededAt: r.superseded_at,
  version: r.version,
  keyId: r.key_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  contentTokens: r.content_tokens,
});

const dateOrNull = (iso: string | null): Date | null => (iso === null ? null : new Date(iso));

/** A memory read through jsonRows. */
export const recordOfJson = (r: JsonRow<MemoryRow>): MemoryRecord =>
  recordOf({
    ...r,
    valid_from: new Date(r.valid_from),
    valid_until: dateOrNull(r.valid_until),
    superseded_at: dateOrNull(r.superseded_at),
    created_at: new Date(r.created_at),
    updated_at: new Date(r.updated_at),
  });

// Every read is limited to the caller's workspace and, for a scoped key, to memories in its container.
export const visible = (alias: string) => `${alias}.workspace_id = $2 and ($3::text is null or $3 = any(${alias}.containers))`;

const versionColumns = "content, type, containers, tags, source, valid_from, valid_until, metadata, confidence, severity, key_id, content_tokens";

/** The columns of a MemoryRow (never the full-text vector, which only the database reads). */
export const memoryColumns = (alias: string) =>
  ["id", "workspace_id", ...versionColumns.split(", "), "state", "superseded_by", "superseded_at", "version", "created_at", "updated_at"]
    .map((c) => `${alias}.${c}`)
    .join(", ");

/** null when the write could not embed. */
const vectorText = (v: Float32Array | null | undefined): string | null => (v ? vectorToBase64(v) : null);

/**
 * SQL for the memories still waiting for the index: the latest content job (memory_id, version, seq) of
 * each memory among the workspace's newest `limit` content jobs. `workspace` and `limit` are SQL
 * expressions (parameter references); bounded, so the cost does not follow a bulk import's backlog.
 */
export const latestContentJobs = (workspace: string, limit: string) => `
  select distinct on (o.memory_id) o.memory_id, o.version, o.seq
  from (select memory_id, version, seq from index_outbox
        where workspace_id = ${workspace} and version is not null order by seq desc limit ${limit}) o
  order by o.memory_id, o.seq desc`;

/**
 * Content characters one insert statement takes at most. On PGlite a statement runs on the event loop, and
 * what an insert does per character (the full-text column's to_tsvector, its GIN index, TOAST) costs about
 * 0.2 to 1.5 ms per KiB, more for varied words: a batch of one hundred 16 KiB memories (1.6 MB) in one
 * statement held the loop 300 ms to over 1 s (2-core AMD EPYC, 2026-11), while /healthz and recalls waited.
 * In statements of at most 32 KiB, with a loop turn between them, each holds it about 20 to 50 ms (see also
 * migration 16, which keeps the full-text index's pending list small); a server (pg) just gets more round
 * trips. The statements share the caller's transaction: a batch still commits whole or not at all.
 */
export const insertChunkChars = 32 * 1024;

/**
 * Inserts new memories (version 1), their first versions and their indexing jobs, in statements of at most
 * insertChunkChars of content (one memory at least), in order. Each job carries the memory's vector from the
 * write path, so recall can score it before it is indexed.
 */
export async function insertMemories(sql: Sql, records: readonly MemoryRecord[], vectors: ReadonlyMap<string, Float32Array | null> = new Map()): Promise<void> {
  let start = 0;
  while (start < records.length) {
    let end = start + 1;
    let chars = records[start]!.content.length;
    while (end < records.length && chars + records[end]!.content.length <= insertChunkChars) chars += records[end++]!.content.length;
    // Lets other work run between two statements (a health check, a recall's reply).
    if (start > 0) await nextTurn();
    await insertChunk(sql, records.slice(start, end), vectors);
    start = end;
  }
}

async function insertChunk(sql: Sql, records: readonly MemoryRecord[], vectors: ReadonlyMap<string, Float32Array | null>): Promise<void> {
  const rows = records.map((m) => ({
    id: m.id,
    workspace_id: m.workspaceId,
    content: m.content,
    type: m.type,
    containers: m.containers,
    tags: m.tags,
    source: m.source,
    valid_from: m.validFrom.toISOString(),
    valid_until: m.validUntil?.toISOString() ?? null,
    metadata: m.metadata,
    confidence: m.confidence,
    severity: m.severity,
    key_id: m.keyId,
    created_at: m.createdAt.toISOString(),
    content_hash: contentHash(m.content),
    content_tokens: m.contentTokens,
    vector: vectorText(vectors.get(m.id)),
  }));
  await sql.query(
    `with input as (
       select * from jsonb_to_recordset($1::jsonb) as x(
         id text, workspace_id text, content text, type text, containers text[], tags text[], source text,
         valid_from timestamptz, valid_until timestamptz, metadata jsonb, confidence double precision,
         severity text, key_id text, created_at timestamptz, content_hash text, content_tokens integer, vector text)),
     inserted as (
       insert into memories (id, workspace_id, ${versionColumns}, version, created_at, updated_at, content_hash)
       select id, workspace_id, ${versionColumns}, 1, created_at, created_at, content_hash from input
       returning id, workspace_id, ${versionColumns}, created_at),
     versions as (
       insert into memory_versions (memory_id, version, ${versionColumns}, created_at)
       select id, 1, ${versionColumns}, created_at from inserted)
     insert into index_outbox (memory_id, workspace_id, version, vector)
     select i.id, i.workspace_id, 1, decode(x.vector, 'base64') from inserted i join input x on x.id = i.id`,
    [JSON.stringify(rows)],
  );
}

export async function findMemory(sql: Sql, scope: Scope, id: string, forUpdate = false): Promise<MemoryRecord | undefined> {
  const [row] = await sql.query<MemoryRow>(
    `select ${memoryColumns("m")} from memories m where m.id = $1 and ${visible("m")}${forUpdate ? " for update" : ""}`,
    [id, scope.workspaceId, scope.container],
  );
  return row && recordOf(row);
}

const versionSelect = `select v.memory_id as id, m.workspace_id, v.version, ${versionColumns
  .split(", ")
  .map((c) => `v.${c}`)
  .join(", ")}, m.state, m.superseded_by, m.superseded_at, m.created_at, v.created_at as updated_at
  from memory_versions v join memories m on m.id = v.memory_id`;

export async function findMemoryVersion(sql: Sql, scope: Scope, id: string, version: number): Promise<MemoryRecord | undefined> {
  const [row] = await sql.query<MemoryRow>(`${versionSelect} where m.id = $1 and ${visible("m")} and v.version = $4`, [
    id,
    scope.workspaceId,
    scope.container,
    version,
  ]);
  return row && recordOf(row);
}

/** All versions, oldest first; empty when the memory is not visible. */
export async function listMemoryVersions(sql: Sql, scope: Scope, id: string): Promise<MemoryRecord[]> {
  const rows = await sql.query<MemoryRow>(`${versionSelect} where m.id = $1 and ${visible("m")} order by v.version`, [
    id,
    scope.workspaceId,
    scope.container,
  ]);
  return rows.map(recordOf);
}

/**
 * Stores `next` as the memory's new current version, appends it to its history and queues its reindexing
 * with the vector of its content (null when the write could not embed).
 */
export async function saveNewVersion(sql: Sql, next: MemoryRecord, vector: Float32Array | null): Promise<void> {
  await sql.query(
    `with updated as (
       update memories set content = $2, type = $3, containers = $4, tags = $5, source = $6, valid_from = $7,
         valid_until = $8, metadata = $9::jsonb, confidence = $10, key_id = $11, version = $12, updated_at = $13,
         severity = $14, content_hash = $15, content_tokens = $16
       where id = $1 and version = $12 - 1
       returning id, workspace_id, version, ${versionColumns}, updated_at),
     versions as (
       insert into memory_versions (memory_id, version, ${versionColumns}, created_at)
       select id, version, ${versionColumns}, updated_at from updated)
     insert into index_outbox (memory_id, workspace_id, version, vector)
     select id, workspace_id, version, decode($17, 'base64') from updated`,
    [
      next.id,
      next.content,
      next.type,
      next.containers,
      next.tags,
      next.source,
      next.validFrom,
      next.validUntil,
      JSON.stringify(next.metadata),
      next.confidence,
      next.keyId,
      next.version,
      next.updatedAt,
      next.severity,
      contentHash(next.content),
      next.contentTokens,
      vectorText(vector),
    ],
  );
}

/**
 * Deletes a memory with its versions (by cascade) and queues the removal of its vector. The memories it
 * shadowed pass to the memory that replaced it, or return to active when it was current; returns the
 * ids that returned to active.
 */
export async function deleteMemory(sql: Sql, id: string): Promise<string[]> {
  // The restored memories are queued too, so the index's state column follows.
  const rows = await sql.query<{ id: string; state: string }>(
    `with deleted as (delete from memories where id = $1 returning id, superseded_by),
     queued as (insert into index_outbox (memory_id) select id from deleted),
     changed as (
       update memories m set
         state = case when d.superseded_by is null then 'active' else 'shadowed' end,
         superseded_by = d.superseded_by,
         superseded_at = case when d.superseded_by is null then null else m.superseded_at end
       from deleted d where m.superseded_by = d.id
       returning m.id, m.state),
     requeued as (insert into index_outbox (memory_id) select id from changed)
     select id, state from changed`,
    [id],
  );
  return rows.filter((r) => r.state === "active").map((r) => r.id);
}

/** One shadowing: `id` is replaced by `by`. `force` also re-points a memory that is already shadowed. */
export interface Shadowing {
  id: string;
  by: string;
  force: boolean;
}

/** Shadows memories of a workspace in one statement; returns the ids actually shadowed. */
export async function shadowMemories(sql: Sql, workspaceId: string, shadowings: readonly Shadowing[], at: Date): Promise<Set<string>> {
  if (shadowings.length === 0) return new Set();
  // Queued for indexing in the same statement, so the index's state column follows and recall's
  // prefilter leaves shadowed memories out of the candidate pool.
  const rows = await sql.query<{ id: string }>(
    `with shadowed as (
       update memories m set state = 'shadowed', superseded_by = s.by, superseded_at = $3
       from jsonb_to_recordset($1::jsonb) as s(id text, by text, force boolean)
       where m.id = s.id and m.workspace_id = $2 and m.id <> s.by and (s.force or m.state = 'active')
       returning m.id),
     queued as (insert into index_outbox (memory_id) select id from shadowed)
     select id from shadowed`,
    [JSON.stringify(shadowings), workspaceId, at],
  );
  return new Set(rows.map((r) => r.id));
}

/** What a duplicate lookup matches on: normalised content, type and the exact set of containers. */
export interface DuplicateProbe {
  contentHash: string;
  type: string;
  containers: string[];
}

// The containers are compared as an expression (m.containers || '{}'), which the containers' GIN index
// cannot serve. The planner cannot estimate containment of a joined row's array and guesses one row, as
// for the content hash; at about 10,000 memories of one container it chose the GIN index, and each probe
// visited every memory of the container: 1.1 s for 100 probes against 1.7 ms through the content-hash
// index (test/storage/storage.test.ts), and up to 1.3 s a write in a server's API ingest.
export const duplicatesSql = `
select distinct on (p.probe) p.probe, ${memoryColumns("m")}
from jsonb_to_recordset($1::jsonb) as p(probe int, content_hash text, type text, containers text[])
join memories m on m.workspace_id = $2 and m.content_hash = p.content_hash and m.state = 'active'
  and m.type = p.type and (m.containers || '{}') @> p.containers and (m.containers || '{}') <@ p.containers
order by p.probe, m.id`;

/** The memories (alias m) matching `where`, read as one JSON document: many rows cost PGlite far less that way (json-rows.ts). */
async function memoriesWhere(sql: Sql, where: string, params: readonly unknown[]): Promise<MemoryRecord[]> {
  return (await jsonRows<MemoryRow>(sql, `select ${memoryColumns("m")} from memories m where ${where}`, params)).map(recordOfJson);
}

/** For each probe, an active memory of the workspace it duplicates (by the content-hash index), in probe order. */
export async function findDuplicates(sql: Sql, workspaceId: string, probes: readonly DuplicateProbe[]): Promise<Array<MemoryRecord | undefined>> {
  if (probes.length === 0) return [];
  const rows = await sql.query<MemoryRow & { probe: number }>(duplicatesSql, [
    JSON.stringify(probes.map((p, probe) => ({ probe, content_hash: p.contentHash, type: p.type, containers: p.containers }))),
    workspaceId,
  ]);
  const found: Array<MemoryRecord | undefined> = probes.map(() => undefined);
  for (const row of rows) found[row.probe] = recordOf(row);
  return found;
}

/** Serialises concurrent creates of the same content in a workspace until the transaction ends. */
export async function lockContentHashes(sql: Sql, workspaceId: string, hashes: readonly string[]): Promise<void> {
  if (hashes.length === 0) return;
  await sql.query(
    `select pg_advisory_xact_lock(k) from (
       select distinct hashtextextended($1 || ':' || h, 0) as k from unnest($2::text[]) as h order by 1) as keys`,
    [workspaceId, [...hashes]],
  );
}

/** The active memories of a workspace among these ids. */
export async function findActiveMemories(sql: Sql, workspaceId: string, ids: readonly string[]): Promise<MemoryRecord[]> {
  if (ids.length === 0) return [];
  return memoriesWhere(sql, "m.id = any($1::text[]) and m.workspace_id = $2 and m.state = 'active'", [ids, workspaceId]);
}

/** A memory another one replaced. */
export interface Superseded {
  id: string;
  content: string;
  supersededBy: string;
  supersededAt: Date;
}

/** The memories these ones replaced that the scope may see, oldest shadowing first: one query for all. */
export async function findSuperseded(sql: Sql, scope: Scope, byIds: readonly string[]): Promise<Superseded[]> {
  if (byIds.length === 0) return [];
  const rows = await sql.query<{ id: string; content: string; superseded_by: string; superseded_at: Date }>(
    `select m.id, m.content, m.superseded_by, m.superseded_at from memories m
     where m.superseded_by = any($1::text[]) and ${visible("m")}
     order by m.superseded_at, m.id`,
    [byIds, scope.workspaceId, scope.container],
  );
  return rows.map((r) => ({ id: r.id, content: r.content, supersededBy: r.superseded_by, supersededAt: r.superseded_at }));
}

/** The current rows of these memories, whoever owns them: for internal work such as indexing. */
export function loadMemories(sql: Sql, ids: readonly string[]): Promise<MemoryRecord[]> {
  return memoriesWhere(sql, "m.id = any($1::text[])", [ids]);
}

/** The current rows of these memories that the scope may see, in no particular order. */
export function findMemories(sql: Sql, scope: Scope, ids: readonly string[]): Promise<MemoryRecord[]> {
  return memoriesWhere(sql, `m.id = any($1::text[]) and ${visible("m")}`, [ids, scope.workspaceId, scope.container]);
}
