import type { JsonObject } from "@bufbuild/protobuf";
import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import type { MemoryDraft } from "./memory-rules.js";

/** One version of a memory as stored: its validated fields plus identity, state and history. */
export interface MemoryRecord extends MemoryDraft {
  id: string;
  workspaceId: string;
  /** active | shadowed. */
  state: string;
  version: number;
  keyId: string;
  /** Creation of the memory (version 1). */
  createdAt: Date;
  /** Creation of this version. */
  updatedAt: Date;
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
  version: number;
  key_id: string;
  created_at: Date;
  updated_at: Date;
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
  version: r.version,
  keyId: r.key_id,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

// Every read is limited to the caller's workspace and, for a scoped key, to memories in its container.
export const visible = (alias: string) => `${alias}.workspace_id = $2 and ($3::text is null or $3 = any(${alias}.containers))`;

const versionColumns = "content, type, containers, tags, source, valid_from, valid_until, metadata, confidence, severity, key_id";

/** The columns of a MemoryRow (never the full-text vector, which only the database reads). */
export const memoryColumns = (alias: string) =>
  ["id", "workspace_id", ...versionColumns.split(", "), "state", "version", "created_at", "updated_at"]
    .map((c) => `${alias}.${c}`)
    .join(", ");

/** Inserts new memories (version 1), their first versions and their indexing jobs in one statement. */
export async function insertMemories(sql: Sql, records: readonly MemoryRecord[]): Promise<void> {
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
  }));
  await sql.query(
    `with input as (
       select * from jsonb_to_recordset($1::jsonb) as x(
         id text, workspace_id text, content text, type text, containers text[], tags text[], source text,
         valid_from timestamptz, valid_until timestamptz, metadata jsonb, confidence double precision,
         severity text, key_id text, created_at timestamptz)),
     inserted as (
       insert into memories (id, workspace_id, ${versionColumns}, version, created_at, updated_at)
       select id, workspace_id, ${versionColumns}, 1, created_at, created_at from input
       returning id, ${versionColumns}, created_at),
     versions as (
       insert into memory_versions (memory_id, version, ${versionColumns}, created_at)
       select id, 1, ${versionColumns}, created_at from inserted)
     insert into index_outbox (memory_id) select id from inserted`,
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
  .join(", ")}, m.state, m.created_at, v.created_at as updated_at
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

/** Stores `next` as the memory's new current version, appends it to its history and queues its reindexing. */
export async function saveNewVersion(sql: Sql, next: MemoryRecord): Promise<void> {
  await sql.query(
    `with updated as (
       update memories set content = $2, type = $3, containers = $4, tags = $5, source = $6, valid_from = $7,
         valid_until = $8, metadata = $9::jsonb, confidence = $10, key_id = $11, version = $12, updated_at = $13,
         severity = $14
       where id = $1 and version = $12 - 1
       returning id, version, ${versionColumns}, updated_at),
     versions as (
       insert into memory_versions (memory_id, version, ${versionColumns}, created_at)
       select id, version, ${versionColumns}, updated_at from updated)
     insert into index_outbox (memory_id) select id from updated`,
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
    ],
  );
}

/** Deletes a memory with its versions (by cascade) and queues the removal of its vector. */
export async function deleteMemory(sql: Sql, id: string): Promise<void> {
  await sql.query(
    `with deleted as (delete from memories where id = $1 returning id)
     insert into index_outbox (memory_id) select id from deleted`,
    [id],
  );
}

/** The current rows of these memories, whoever owns them: for internal work such as indexing. */
export async function loadMemories(sql: Sql, ids: readonly string[]): Promise<MemoryRecord[]> {
  const rows = await sql.query<MemoryRow>(`select ${memoryColumns("m")} from memories m where m.id = any($1::text[])`, [ids]);
  return rows.map(recordOf);
}

/** The current rows of these memories that the scope may see, in no particular order. */
export async function findMemories(sql: Sql, scope: Scope, ids: readonly string[]): Promise<MemoryRecord[]> {
  const rows = await sql.query<MemoryRow>(
    `select ${memoryColumns("m")} from memories m where m.id = any($1::text[]) and ${visible("m")}`,
    [ids, scope.workspaceId, scope.container],
  );
  return rows.map(recordOf);
}
