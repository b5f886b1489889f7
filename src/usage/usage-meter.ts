import type { AgentPrincipal } from "../accounts/principal.js";
import type { Database, Sql } from "../db/database.js";
import { groupCommit } from "../db/group-commit.js";
import { apiError } from "../errors/api-error.js";
import { withHeaders } from "./admission.js";
import { contentCostUnits, recallCostUnits } from "./cost.js";
import { dayKey, periodKey, secondsToReset, usagePeriod } from "./period.js";
import type { Plan, PlanCatalog } from "./plans.js";
import { countTokens } from "../recall/tokens.js";
import { addStored, chargePeriod, readUsage, removeMemoriesStored } from "./usage-store.js";

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
  /** Counts a new skill and the cost of embedding its text (name and description), in the write's transaction. */
  reserveSkill(tx: Sql, principal: AgentPrincipal, embeddedText: string): Promise<void>;
  /** Charges re-embedding a skill whose embedded text a new version changed (nothing when it did not change). */
  chargeReembedding(tx: Sql, principal: AgentPrincipal, before: string, after: string): Promise<void>;
}

/** Recalls charged by one statement at most. */
const maxRecallsCharged = 256;

type Cap = "memoriesStored" | "skillsStored" | "recallsPerMonth" | "costUnitsPerMonth";

const capMessages: Record<Exclude<Cap, "costUnitsPerMonth">, (plan: Plan) => string> = {
  memoriesStored: (plan) => `the ${plan.name} plan stores at most ${plan.memoriesStored} memories`,
  skillsStored: (plan) => `the ${plan.name} plan stores at most ${plan.skillsStored} skills`,
  recallsPerMonth: (plan) => `the ${plan.name} plan allows ${plan.recallsPerMonth} recalls a month`,
};

/** The error for a crossed cap, with Retry-After (seconds to the monthly reset) as header and detail. */
export function capError(cap: Cap, plan: Plan, now: Date) {
  const retryAfter = String(secondsToReset(now));
  const details = { limit: cap, plan: plan.name, retryAfter, resetsAt: usagePeriod(now).resetsAt.toISOString() };
  const err =
    cap === "costUnitsPerMonth"
      ? apiError("cost_ceiling", `the ${plan.name} plan's cost ceiling of ${plan.costUnitsPerMonth} units this month is reached`, details)
      : apiError("quota_exhausted", capMessages[cap](plan), details);
  return withHeaders(err, [["retry-after", retryAfter]]);
}

/** Charged together: the recalls of one workspace, plan and day. */
interface RecallCharge {
  workspaceId: string;
  at: Date;
  caps: { recalls: number | null; costUnits: number | null };
}

class CapReached extends Error {}

export function usageMeter(db: Database, plans: PlanCatalog, clock: () => Date = () => new Date()): UsageMeter {
  // Concurrent recalls of a workspace are charged by one statement (a round trip of about 1.5 ms on PGlite,
  // where statements run one at a time); a group that would cross a cap is charged recall by recall, so
  // exactly as many as fit are admitted.
  const recallCharges = groupCommit<RecallCharge>(async (_, charges) => {
    const { workspaceId, at, caps } = charges[0]!;
    const n = charges.length;
    if (!(await chargePeriod(db, workspaceId, at, { recalls: n, costUnits: n * recallCostUnits }, caps))) throw new CapReached();
  }, maxRecallsCharged);

  const chargeCost = async (tx: Sql, principal: AgentPrincipal, plan: Plan, costUnits: number, now: Date) => {
    const caps = { recalls: null, costUnits: plan.costUnitsPerMonth };
    if (costUnits > 0 && !(await chargePeriod(tx, principal.workspaceId, now, { recalls: 0, costUnits }, caps))) {
      throw capError("costUnitsPerMonth", plan, now);
    }
  };

  return {
    async reserveMemories(tx, principal, contentTokens) {
      const plan = plans.planOf(principal.plan);
      const now = clock();
      if (!(await addStored(tx, "memories", principal.workspaceId, contentTokens.length, plan.memoriesStored))) {
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
      const caps = { recalls: plan.recallsPerMonth, costUnits: plan.costUnitsPerMonth };
      try {
        await recallCharges.submit(`${principal.workspaceId} ${plan.name} ${dayKey(now)}`, { workspaceId: principal.workspaceId, at: now, caps });
        return;
      } catch (err) {
        if (!(err instanceof CapReached)) throw err;
      }
      // Refused: find which cap, to name it (only on this path).
      const used = await readUsage(db, principal.workspaceId, periodKey(now));
      const recallsLeft = plan.recallsPerMonth === null || used.recalls + 1 <= plan.recallsPerMonth;
      throw capError(recallsLeft ? "costUnitsPerMonth" : "recallsPerMonth", plan, now);
    },

    async reserveSkill(tx, principal, embeddedText) {
      const plan = plans.planOf(principal.plan);
      const now = clock();
      if (!(await addStored(tx, "skills", principal.workspaceId, 1, plan.skillsStored))) throw capError("skillsStored", plan, now);
      // A name and a description (at most about 1,100 characters): counted in place.
      await chargeCost(tx, principal, plan, countTokens(embeddedText), now);
    },

    async chargeReembedding(tx, principal, before, after) {
      if (before !== after) await chargeCost(tx, principal, plans.planOf(principal.plan), countTokens(after), clock());
    },
  };
}
