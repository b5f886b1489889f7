import type { Scope } from "../accounts/container-scope.js";
import type { Sql } from "../db/database.js";
import type { ListCursor, ListQuery } from "./list-rules.js";
import { memoryColumns, recordOf, type MemoryRecord, type MemoryRow } from "./memory-store.js";
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
  if (filter.arrays.length > 0) {
    c.add(
      `not exists (select 1 from jsonb_to_recordset($::jsonb) as a(path text[], value jsonb) where ${alias}.metadata #> a.path is distinct from a.value)`,
      JSON.stringify(filter.arrays),
    );
  }
}

/** Newest first by (created_at, id), one page after the cursor: keyset pagination on memories_by_creation. */
export async function listMemories(sql: Sql, scope: Scope, q: ListQuery): Promise<{ memories: MemoryRecord[]; next: ListCursor | null }> {
  const c = scopeConditions(scope);
  if (q.containers.length > 0) c.add("m.containers && $::text[]", q.containers);
  if (q.types.length > 0) c.add("m.type = any($::text[])", q.types);
  if (q.tags.length > 0) c.add("m.tags && $::text[]", q.tags);
  if (q.state) c.add("m.state = $", q.state);
  if (q.createdAfter) c.add("m.created_at >= $", q.createdAfter);
  if (q.createdBefore) c.add("m.created_at < $", q.createdBefore);
  if (q.metadata) addMetadataConditions(c, q.metadata);
  if (q.after) {
    const at = c.param(q.after.createdAtMicros);
    c.add(`(m.created_at, m.id) < (timestamptz 'epoch' + ${at}::bigint * interval '1 microsecond', $)`, q.after.id);
  }
  const limit = c.param(q.pageSize + 1);
  const rows = await sql.query<MemoryRow & { created_micros: string }>(
    `select ${memoryColumns("m")}, ((extract(epoch from m.created_at) * 1000000)::bigint)::text as created_micros
     from memories m where ${c.where}
     order by m.created_at desc, m.id desc limit ${limit}`,
    c.params,
  );
  const page = rows.slice(0, q.pageSize);
  const last = page.at(-1);
  return {
    memories: page.map(recordOf),
    next: rows.length > q.pageSize && last ? { createdAtMicros: last.created_micros, id: last.id } : null,
  };
}
