import type { Sql } from "../db/database.js";
import { dayKey, periodKey } from "./period.js";

// Usage counters. Every change is one conditional statement (increment only if the result stays
// within the cap), so concurrent requests can neither lose updates nor jointly pass a cap.

/** A null cap is unlimited. */
type Cap = number | null;

/** Stored-item counters of workspace_usage, by what they count. */
const storedColumn = { memories: "memories_stored", skills: "skills_stored" } as const;
export type StoredKind = keyof typeof storedColumn;

/** Adds n stored items if the workspace stays within `cap`; false (and no change) otherwise. */
export async function addStored(sql: Sql, kind: StoredKind, workspaceId: string, n: number, cap: Cap): Promise<boolean> {
  const column = storedColumn[kind];
  const rows = await sql.query(
    `insert into workspace_usage as u (workspace_id, ${column})
     select $1, $2::bigint where $3::bigint is null or $2::bigint <= $3::bigint
     on conflict (workspace_id) do update set ${column} = u.${column} + excluded.${column}
       where $3::bigint is null or u.${column} + excluded.${column} <= $3::bigint
     returning ${column}`,
    [workspaceId, n, cap],
  );
  return rows.length > 0;
}

export async function removeMemoriesStored(sql: Sql, workspaceId: string, n: number): Promise<void> {
  await sql.query(
    `update workspace_usage set memories_stored = greatest(0, memories_stored - $2::bigint) where workspace_id = $1`,
    [workspaceId, n],
  );
}

export interface PeriodCharge {
  recalls: number;
  costUnits: number;
}

/**
 * Adds to the counters of the period and of the UTC day holding `at` if the period's stay within their caps;
 * false (and no change) otherwise. One statement: the day's row is written only when the period's was.
 */
export async function chargePeriod(
  sql: Sql,
  workspaceId: string,
  at: Date,
  charge: PeriodCharge,
  caps: { recalls: Cap; costUnits: Cap },
): Promise<boolean> {
  const rows = await sql.query(
    `with charged as (
       insert into usage_periods as u (workspace_id, period_start, recalls, cost_units)
       select $1, $2::date, $3::bigint, $4::bigint
       where ($5::bigint is null or $3::bigint <= $5::bigint) and ($6::bigint is null or $4::bigint <= $6::bigint)
       on conflict (workspace_id, period_start) do update
         set recalls = u.recalls + excluded.recalls, cost_units = u.cost_units + excluded.cost_units
         where ($5::bigint is null or u.recalls + excluded.recalls <= $5::bigint)
           and ($6::bigint is null or u.cost_units + excluded.cost_units <= $6::bigint)
       returning workspace_id
     )
     insert into usage_days as d (workspace_id, day, recalls, cost_units)
     select workspace_id, $7::date, $3::bigint, $4::bigint from charged
     on conflict (workspace_id, day) do update
       set recalls = d.recalls + excluded.recalls, cost_units = d.cost_units + excluded.cost_units
     returning day`,
    [workspaceId, periodKey(at), charge.recalls, charge.costUnits, caps.recalls, caps.costUnits, dayKey(at)],
    { prepare: true },
  );
  return rows.length > 0;
}

export interface UsageDayCounts {
  /** YYYY-MM-DD (UTC). */
  day: string;
  recalls: number;
  costUnits: number;
}

/** The days of the period starting at `periodStart` (YYYY-MM-DD) that have counters, oldest first: at most 31 rows. */
export async function readUsageDays(sql: Sql, workspaceId: string, periodStart: string): Promise<UsageDayCounts[]> {
  const rows = await sql.query<{ day: string; recalls: string; cost_units: string }>(
    `select to_char(d.day, 'YYYY-MM-DD') as day, d.recalls, d.cost_units from usage_days d
     where d.workspace_id = $1 and d.day >= $2::date and d.day < ($2::date + interval '1 month')
     order by d.day`,
    [workspaceId, periodStart],
  );
  return rows.map((r) => ({ day: r.day, recalls: Number(r.recalls), costUnits: Number(r.cost_units) }));
}

export interface UsageCounts {
  memoriesStored: number;
  skillsStored: number;
  recalls: number;
  costUnits: number;
}

export async function readUsage(sql: Sql, workspaceId: string, period: string): Promise<UsageCounts> {
  const [row] = await sql.query<{ memories_stored: string; skills_stored: string; recalls: string; cost_units: string }>(
    `select coalesce(u.memories_stored, 0) as memories_stored, coalesce(u.skills_stored, 0) as skills_stored,
       coalesce(p.recalls, 0) as recalls,
       coalesce(p.cost_units, 0) as cost_units
     from (select $1::text as id) w
     left join workspace_usage u on u.workspace_id = w.id
     left join usage_periods p on p.workspace_id = w.id and p.period_start = $2::date`,
    [workspaceId, period],
  );
  return {
    memoriesStored: Number(row!.memories_stored),
    skillsStored: Number(row!.skills_stored),
    recalls: Number(row!.recalls),
    costUnits: Number(row!.cost_units),
  };
}
