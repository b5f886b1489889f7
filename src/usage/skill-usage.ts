import type { AgentPrincipal } from "../accounts/principal.js";
import type { Sql } from "../db/database.js";
import { apiError } from "../errors/api-error.js";
import { withHeaders } from "./admission.js";
import { countTokens } from "../recall/tokens.js";
import { periodKey, secondsToReset, usagePeriod } from "./period.js";
import type { PlanCatalog } from "./plans.js";
import { chargePeriod } from "./usage-store.js";

// Skills count against the plan's skillsStored cap, and embedding a skill's name and description
// costs units like memory content (1 per token). Both run in the write's transaction.

/** Adds n skills if the workspace stays within `cap` (null: unlimited); false (and no change) otherwise. */
async function addSkillsStored(sql: Sql, workspaceId: string, n: number, cap: number | null): Promise<boolean> {
  const rows = await sql.query(
    `insert into workspace_usage as u (workspace_id, skills_stored)
     select $1, $2::bigint where $3::bigint is null or $2::bigint <= $3::bigint
     on conflict (workspace_id) do update set skills_stored = u.skills_stored + excluded.skills_stored
       where $3::bigint is null or u.skills_stored + excluded.skills_stored <= $3::bigint
     returning skills_stored`,
    [workspaceId, n, cap],
  );
  return rows.length > 0;
}

export async function readSkillsStored(sql: Sql, workspaceId: string): Promise<number> {
  const [row] = await sql.query<{ n: string }>(`select skills_stored::text as n from workspace_usage where workspace_id = $1`, [workspaceId]);
  return Number(row?.n ?? 0);
}

export interface SkillUsage {
  /** Counts a new skill and the cost of embedding its text; throws quota_exhausted or cost_ceiling. */
  reserveSkill(tx: Sql, principal: AgentPrincipal, embeddedText: string): Promise<void>;
  /** Charges re-embedding when a new version's embedded text changed. */
  chargeReembedding(tx: Sql, principal: AgentPrincipal, before: string, after: string): Promise<void>;
}

export function skillUsage(plans: PlanCatalog, clock: () => Date = () => new Date()): SkillUsage {
  const fail = (code: "quota_exhausted" | "cost_ceiling", message: string, limit: string, plan: string, now: Date) => {
    const retryAfter = String(secondsToReset(now));
    const details = { limit, plan, retryAfter, resetsAt: usagePeriod(now).resetsAt.toISOString() };
    return withHeaders(apiError(code, message, details), [["retry-after", retryAfter]]);
  };
  const charge = async (tx: Sql, principal: AgentPrincipal, text: string, now: Date) => {
    const plan = plans.planOf(principal.plan);
    // The embedded text is a name and a description (at most about 1,100 characters): counted in place.
    const units = countTokens(text);
    const caps = { recalls: null, costUnits: plan.costUnitsPerMonth };
    if (units > 0 && !(await chargePeriod(tx, principal.workspaceId, periodKey(now), { recalls: 0, costUnits: units }, caps))) {
      throw fail("cost_ceiling", `the ${plan.name} plan's cost ceiling of ${plan.costUnitsPerMonth} units this month is reached`, "costUnitsPerMonth", plan.name, now);
    }
  };
  return {
    async reserveSkill(tx, principal, embeddedText) {
      const plan = plans.planOf(principal.plan);
      const now = clock();
      if (!(await addSkillsStored(tx, principal.workspaceId, 1, plan.skillsStored))) {
        throw fail("quota_exhausted", `the ${plan.name} plan stores at most ${plan.skillsStored} skills`, "skillsStored", plan.name, now);
      }
      await charge(tx, principal, embeddedText, now);
    },
    async chargeReembedding(tx, principal, before, after) {
      if (before !== after) await charge(tx, principal, after, clock());
    },
  };
}
