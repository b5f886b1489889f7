import type { AgentPrincipal } from "../accounts/principal.js";
import type { Database, Sql } from "../db/database.js";
import { apiError } from "../errors/api-error.js";
import { withHeaders } from "./admission.js";
import { contentCostUnits, recallCostUnits } from "./cost.js";
import { periodKey, secondsToReset, usagePeriod } from "./period.js";
import type { Plan, PlanCatalog } from "./plans.js";
import { addMemoriesStored, chargePeriod, readUsage, removeMemoriesStored } from "./usage-store.js";

/** Enforces a workspace's plan caps on the operations that use them. */
export interface UsageMeter {
  /**
   * Counts memories about to be written in `tx` (their number and the cost of their contents, given by
   * their token counts);
   * throws quota_exhausted or cost_ceiling, changing nothing, when a cap would be crossed. Runs in
   * the write's transaction, so a failed write counts nothing and concurrent writes serialise on
   * the counter.
   */
  reserveMemories(tx: Sql, principal: AgentPrincipal, contentTokens: readonly number[]): Promise<void>;
  /** Charges re-embedding content changed by an update (nothing when it did not change); `afterTokens` counts `after`. */
  chargeUpdate(tx: Sql, principal: AgentPrincipal, before: string, after: string, afterTokens: number): Promise<void>;
  /** Counts memories deleted in `tx`. */
  memoriesDeleted(tx: Sql, principal: AgentPrincipal, n: number): Promise<void>;
  /** Counts one recall and its cost; throws quota_exhausted or cost_ceiling when the plan's caps are reached. */
  chargeRecall(principal: AgentPrincipal): Promise<void>;
}

type Cap = "memoriesStored" | "recallsPerMonth" | "costUnitsPerMonth";

/** The error for a crossed cap, with Retry-After (seconds to the monthly reset) as header and detail. */
export function capError(cap: Cap, plan: Plan, now: Date) {
  const retryAfter = String(secondsToReset(now));
  const details = { limit: cap, plan: plan.name, retryAfter, resetsAt: usagePeriod(now).resetsAt.toISOString() };
  const err =
    cap === "costUnitsPerMonth"
      ? apiError("cost_ceiling", `the ${plan.name} plan's cost ceiling of ${plan.costUnitsPerMonth} units this month is reached`, details)
      : apiError(
          "quota_exhausted",
          cap === "memoriesStored"
            ? `the ${plan.name} plan stores at most ${plan.memoriesStored} memories`
            : `the ${plan.name} plan allows ${plan.recallsPerMonth} recalls a month`,
          details,
        );
  return withHeaders(err, [["retry-after", retryAfter]]);
}

export function usageMeter(db: Database, plans: PlanCatalog, clock: () => Date = () => new Date()): UsageMeter {
  const chargeCost = async (tx: Sql, principal: AgentPrincipal, plan: Plan, costUnits: number, now: Date) => {
    const caps = { recalls: null, costUnits: plan.costUnitsPerMonth };
    if (costUnits > 0 && !(await chargePeriod(tx, principal.workspaceId, periodKey(now), { recalls: 0, costUnits }, caps))) {
      throw capError("costUnitsPerMonth", plan, now);
    }
  };

  return {
    async reserveMemories(tx, principal, contentTokens) {
      const plan = plans.planOf(principal.plan);
      const now = clock();
      if (!(await addMemoriesStored(tx, principal.workspaceId, contentTokens.length, plan.memoriesStored))) {
        throw capError("memoriesStored", plan, now);
      }
      await chargeCost(tx, principal, plan, contentCostUnits(contentTokens), now);
    },

    async chargeUpdate(tx, principal, before, after, afterTokens) {
      if (before === after) return;
      await chargeCost(tx, principal, plans.planOf(principal.plan), contentCostUnits([afterTokens]), clock());
    },

    async memoriesDeleted(tx, principal, n) {
      await removeMemoriesStored(tx, principal.workspaceId, n);
    },

    async chargeRecall(principal) {
      const plan = plans.planOf(principal.plan);
      const now = clock();
      const period = periodKey(now);
      const caps = { recalls: plan.recallsPerMonth, costUnits: plan.costUnitsPerMonth };
      if (await chargePeriod(db, principal.workspaceId, period, { recalls: 1, costUnits: recallCostUnits }, caps)) return;
      // Refused: find which cap, to name it (only on this path).
      const used = await readUsage(db, principal.workspaceId, period);
      const recallsLeft = plan.recallsPerMonth === null || used.recalls + 1 <= plan.recallsPerMonth;
      throw capError(recallsLeft ? "costUnitsPerMonth" : "recallsPerMonth", plan, now);
    },
  };
}
