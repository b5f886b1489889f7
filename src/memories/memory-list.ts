import type { Scope } from "../accounts/container-scope.js";
import type { Database, Sql } from "../db/database.js";
import { jsonRows } from "../db/json-rows.js";
import type { ListCursor, ListQuery } from "./list-rules.js";
import { memoryColumns, recordOfJson, type MemoryRecord, type MemoryRow } from "./memory-store.js";
import type { MetadataFilter } from "./metadata-filter.js";

/** Builds a WHERE clause from the conditions actually present, so each query is planned for what it filters on. */
export class Conditions {
  readonly clauses: string[] = [];
  readonly params: unknown[] = [];

  /** Adds a clause; a `$` not followed by a digit stands for the value's parameter. */
  add(clause: string, value: unknown): this {
    this.params.push(value);
    this.clauses.push(clause.replace(/\$(?!\d)/g, `$${this.params.length}`));
    return this;
  }

  /** The next parameter's placeholder, for values used outside the clauses (e.g. the limit). */
  param(value: unknown): string {
    this.params.push(value);
    return `$${this.params.length}`;
  }

  get where(): string {
    return this.clauses.join(" and ");
  }
}

/** Workspace and, for a scoped key, its container: what every read is limited to. */
export function scopeConditions(scope: Scope, alias = "m"): Conditions {
  const c = new Conditions().add(`${alias}.workspace_id = $`, scope.workspaceId);
  if (scope.container !== null) c.add(`$ = any(${alias}.containers)`, scope.container);
  return c;
}

/**
 * Containment by the GIN index (jsonb_path_ops), then equality of the arrays the filter names (containment
 * would accept an array holding more elements).
 */
export function addMetadataConditions(c: Conditions, filter: MetadataFilter, alias = "m"): void {
  c.add(`${alias}.metadata @> $::jsonb`, JSON.stringify(filter.contains));
  if (filter.arrays.length > 0) c.add(metadataArraysEqual(alias, "$"), JSON.stringify(filter.arrays));
}

/** SQL: the memory's metadata holds each of `param`'s arrays (a JSON array of {path, value}) at its path. */
export const metadataArraysEqual = (alias: string, param: string) =>
  `not exists (select 1 from jsonb_to_recordset(${param}::jsonb) as a(path text[], value jsonb) where ${alias}.metadata #> a.path is distinct from a.value)`;

/** A metadata filter matching at most this many memories is answered from the GIN index, then sorted. */
const fewMatches = 1000;

/**
 * Runs fn in a transaction whose queries may only use bitmap scans, so a metadata filter is looked up in its
 * GIN index. Left alone, the planner multiplies the selectivities of correlated filters (a project whose
 * memories are all of one type), expects many matches, and walks the creation index filtering every row:
 * at 1M memories a page matching nothing took 1.4 s.
 */
function withBitmapScans<T>(db: Database, fn: (tx: Sql) => Promise<T>): Promise<T> {
  return db.transaction(async (tx) => {
    await tx.query("select set_config('enable_seqscan', 'off', true), set_config('enable_indexscan', 'off', true)");
    return fn(tx);
  });
}

/**
 * Newest first by (created_at, id), one page after the cursor: keyset pagination on memories_by_creation.
 * With a metadata filter, the matches are counted first through the GIN index (up to fewMatches + 1): few
 * are read and sorted from there; many are dense enough to meet soon when walking the creation index.
 */
export async function listMemories(db: Database, scope: Scope, q: ListQuery): Promise<{ memories: MemoryRecord[]; next: ListCursor | null }> {
  const c = scopeConditions(scope);
  if (q.containers.length > 0) c.add("m.containers && $::text[]", q.containers);
  if (q.types.length > 0) c.add("m.type = any($::text[])", q.types);
  if (q.tags.length > 0) c.add("m.tags && $::text[]", q.tags);
  if (q.state) c.add("m.state = $", q.state);
  if (q.createdAfter) c.add("m.created_at >= $", q.createdAfter);
  if (q.createdBefore) c.add("m.created_at < $", q.createdBefore);
  if (q.metadata) addMetadataConditions(c, q.metadata);
  if (q.supersededBy) c.add("m.superseded_by = $", q.supersededBy);
  if (q.after) {
    const at = c.param(q.after.createdAtMicros);
    c.add(`(m.created_at, m.id) < (timestamptz 'epoch' + ${at}::bigint * interval '1 microsecond', $)`, q.after.id);
  }
  // One more parameter, the last: the page size plus one (to tell whether a next page exists).
  const last = `$${c.params.length + 1}`;
  const pageSql = `select ${memoryColumns("m")}, ((extract(epoch from m.created_at) * 1000000)::bigint)::text as created_micros
     from memories m where ${c.where}
     order by m.created_at desc, m.id desc limit ${last}`;
  const page = (sql: Sql) => jsonRows<MemoryRow & { created_micros: string }>(sql, pageSql, [...c.params, q.pageSize + 1], "r.created_at desc, r.id desc");
  const fromGin = q.metadata
    ? await withBitmapScans(db, async (tx) => {
        const [{ n }] = (await tx.query<{ n: number }>(`select count(*)::int as n from (select 1 from memories m where ${c.where} limit ${last}) s`, [
          ...c.params,
          fewMatches + 1,
        ])) as [{ n: number }];
        return n <= fewMatches ? page(tx) : null;
      })
    : null;
  const rows = fromGin ?? (await page(db));
  const shown = rows.slice(0, q.pageSize);
  const end = shown.at(-1);
  return {
    memories: shown.map(recordOfJson),
    next: rows.length > q.pageSize && end ? { createdAtMicros: end.created_micros, id: end.id } : null,
  };
}
