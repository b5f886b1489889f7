import type { SearchScope } from "./scope-coverage.js";
import type { VectorFilter } from "./vector-index.js";

/** A SQL string literal; DataFusion has no backslash escapes, so doubling quotes is the whole job. */
const sqlString = (value: string) => `'${value.replaceAll("'", "''")}'`;

const sqlList = (values: readonly string[]) => values.map(sqlString).join(", ");

/** `id IN (...)`, for deletes and id filters. */
export const idIn = (ids: readonly string[]) => `id IN (${sqlList(ids)})`;

function sqlNumber(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`filter value must be a finite number, got ${value}`);
  return String(value);
}

/** Epoch milliseconds as an integer literal, matching the int64 time columns. */
const sqlMillis = (value: number) => sqlNumber(Math.trunc(value));

/**
 * A search's WHERE clause; and, for a search the row cache may run without its scope (see
 * lanceRowCache), the clause without its workspace and container clauses ("" when none remain) with the
 * scope they named.
 */
export interface LanceWhere {
  scoped: string;
  unscoped?: { where: string; scope: SearchScope };
}

/** Adds `where` to a query, unless it is empty. */
export const withWhere = <Q extends { where(predicate: string): Q }>(query: Q, where: string): Q => (where ? query.where(where) : query);

/**
 * The LanceDB WHERE clauses for a filter. Any-of on list columns uses array_has_any, which LanceDB 0.37
 * answers from LABEL_LIST indexes. Empty lists are the caller's to handle (they match nothing, and
 * `IN ()` is not valid SQL).
 */
export function lanceWhere(filter: VectorFilter): LanceWhere {
  const scope = [`workspace_id = ${sqlString(filter.workspaceId)}`];
  if (filter.containers) scope.push(`array_has_any(containers, [${sqlList(filter.containers)}])`);
  const clauses: string[] = [];
  if (filter.types) clauses.push(`type IN (${sqlList(filter.types)})`);
  if (filter.tags) clauses.push(`array_has_any(tags, [${sqlList(filter.tags)}])`);
  if (filter.metadataTerms?.length) clauses.push(`array_has_all(metadata_terms, [${sqlList(filter.metadataTerms)}])`);
  if (filter.severities) clauses.push(`severity IN (${sqlList(filter.severities)})`);
  if (filter.states) clauses.push(`state IN (${sqlList(filter.states)})`);
  if (filter.minConfidence !== undefined) clauses.push(`confidence >= ${sqlNumber(filter.minConfidence)}`);
  if (filter.createdAfter !== undefined) clauses.push(`created_at >= ${sqlMillis(filter.createdAfter)}`);
  if (filter.createdBefore !== undefined) clauses.push(`created_at < ${sqlMillis(filter.createdBefore)}`);
  if (filter.validAt !== undefined) {
    const t = sqlMillis(filter.validAt);
    clauses.push(`valid_from <= ${t}`, `(valid_until IS NULL OR valid_until > ${t})`);
  }
  return {
    scoped: [...scope, ...clauses].join(" AND "),
    unscoped: { where: clauses.join(" AND "), scope: { workspaceId: filter.workspaceId, ...(filter.containers ? { containers: filter.containers } : {}) } },
  };
}

