import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import type { PlanLimitsSchema, RateLimitsSchema, StatsService } from "../../gen/agent/v1/stats_pb.js";
import { agentPrincipal } from "../accounts/principal.js";
import type { Sql } from "../db/database.js";
import { periodDaysSoFar, periodKey, usagePeriod } from "./period.js";
import { effectiveRate, type Plan, type PlanCatalog, type RateOverride } from "./plans.js";
import { readUsage, readUsageDays } from "./usage-store.js";
import { findProfile } from "../marketplace/author-profiles.js";

const orUndefined = (cap: number | null) => cap ?? undefined;
const left = (cap: number | null, used: number) => (cap === null ? undefined : Math.max(0, cap - used));

export const planLimitsMessage = (plan: Plan): MessageInitShape<typeof PlanLimitsSchema> => ({
  memoriesStored: orUndefined(plan.memoriesStored),
  recallsPerMonth: orUndefined(plan.recallsPerMonth),
  costUnitsPerMonth: orUndefined(plan.costUnitsPerMonth),
  skillsStored: orUndefined(plan.skillsStored),
});

export const rateLimitsMessage = (plan: Plan, override: RateOverride | null): MessageInitShape<typeof RateLimitsSchema> =>
  effectiveRate(plan, override);

/** GET /api/v1/agent/stats and its history: read counters only, so they never count against quota or cost. */
export function statsService(db: Sql, plans: PlanCatalog): ServiceImpl<typeof StatsService> {
  return {
    async getStats(_req, ctx) {
      const principal = agentPrincipal(ctx);
      const plan = plans.planOf(principal.plan);
      const now = new Date();
      const period = usagePeriod(now);
      const [used, profile] = await Promise.all([readUsage(db, principal.workspaceId, periodKey(now)), findProfile(db, principal.workspaceId)]);
      return {
        workspace: principal.workspace,
        container: principal.container ?? undefined,
        authorHandle: profile?.handle,
        plan: plan.name,
        periodStart: period.start.toISOString(),
        resetsAt: period.resetsAt.toISOString(),
        memoriesStored: used.memoriesStored,
        recallsUsed: used.recalls,
        costUsed: used.costUnits,
        skillsStored: used.skillsStored,
        limits: planLimitsMessage(plan),
        remaining: {
          memoriesStored: left(plan.memoriesStored, used.memoriesStored),
          recalls: left(plan.recallsPerMonth, used.recalls),
          costUnits: left(plan.costUnitsPerMonth, used.costUnits),
          skillsStored: left(plan.skillsStored, used.skillsStored),
        },
        rateLimits: rateLimitsMessage(plan, principal.rateOverride),
      };
    },

    async getUsageHistory(_req, ctx) {
      const principal = agentPrincipal(ctx);
      const now = new Date();
      const period = usagePeriod(now);
      const counted = new Map((await readUsageDays(db, principal.workspaceId, periodKey(now))).map((d) => [d.day, d]));
      return {
        periodStart: period.start.toISOString(),
        resetsAt: period.resetsAt.toISOString(),
        days: periodDaysSoFar(now).map((date) => ({ date, recalls: counted.get(date)?.recalls ?? 0, costUnits: counted.get(date)?.costUnits ?? 0 })),
      };
    },
  };
}
