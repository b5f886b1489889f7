import { z } from "zod";

// Plans are configuration: a JSON object of named plans (PLANS_FILE or PLANS), with built-in
// defaults. Each workspace is on one plan (DEFAULT_PLAN until an admin sets another).

const maxCap = 2_147_483_647;
/** A cap; null is unlimited. */
const cap = z.number().int().min(0).max(maxCap).nullable();

/** Each rate field's rule, for a plan's rate and for an admin's per-key override of some of them. */
export const rateFields = {
  /** Requests per second a key may send indefinitely. */
  sustainedPerSecond: z.number().positive("must be greater than 0"),
  /** Requests per second during a burst. */
  burstPerSecond: z.number().min(1, "must be at least 1"),
  /** How long a burst at burstPerSecond may last. */
  burstSeconds: z.number().min(0, "must be at least 0"),
  /** Requests of one key in flight at once, per node. */
  concurrency: z.number().int("must be a whole number").min(1, "must be 1 to 100000").max(100_000, "must be 1 to 100000"),
};

export const rateLimitsSchema = z
  .object(rateFields)
  .strict()
  .refine((r) => r.burstPerSecond >= r.sustainedPerSecond, {
    message: "must be at least sustainedPerSecond",
    path: ["burstPerSecond"],
    params: { rule: "at_least_sustained" },
  });

export type RateLimits = z.infer<typeof rateLimitsSchema>;

/** The given fields of a key's override; the rest come from its plan. */
export type RateOverride = Partial<RateLimits>;

const planSchema = z
  .object({
    memoriesStored: cap,
    /** Absent in older plan files: unlimited. */
    skillsStored: cap.default(null),
    recallsPerMonth: cap,
    costUnitsPerMonth: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER).nullable(),
    rate: rateLimitsSchema,
    /** Whether admins may set per-key rate limits for this plan's keys. */
    keyRateOverrides: z.boolean().default(false),
  })
  .strict();

export type Plan = z.infer<typeof planSchema> & { name: string };

export const plansSchema = z.record(z.string().regex(/^[a-z0-9_-]{1,32}$/, "plan names are 1 to 32 characters from a-z, 0-9, _ and -"), planSchema);

/** The spec's default rate (section 8): 100/s sustained, bursts of 500/s for 10 s; 32 requests in flight. */
export const defaultRate: RateLimits = { sustainedPerSecond: 100, burstPerSecond: 500, burstSeconds: 10, concurrency: 32 };

/**
 * Built-in plans. A self-hosted server starts on `unlimited` (no caps, the default rate); operators
 * selling plans set DEFAULT_PLAN and put workspaces on plans through the admin API.
 */
export const builtInPlans: z.input<typeof plansSchema> = {
  unlimited: { memoriesStored: null, skillsStored: null, recallsPerMonth: null, costUnitsPerMonth: null, rate: defaultRate, keyRateOverrides: true },
  free: { memoriesStored: 10_000, skillsStored: 1_000, recallsPerMonth: 10_000, costUnitsPerMonth: 2_000_000, rate: defaultRate },
  pro: { memoriesStored: 1_000_000, skillsStored: 100_000, recallsPerMonth: 1_000_000, costUnitsPerMonth: 200_000_000, rate: defaultRate },
  enterprise: { memoriesStored: null, skillsStored: null, recallsPerMonth: null, costUnitsPerMonth: null, rate: defaultRate, keyRateOverrides: true },
};

export interface PlanCatalog {
  defaultPlan: Plan;
  byName: ReadonlyMap<string, Plan>;
  /** The workspace's plan; a name no longer configured falls back to the default plan. */
  planOf(name: string | null): Plan;
}

export function planCatalog(plans: z.output<typeof plansSchema>, defaultName: string): PlanCatalog {
  const byName = new Map(Object.entries(plans).map(([name, p]) => [name, { ...p, name }]));
  const defaultPlan = byName.get(defaultName);
  if (!defaultPlan) throw new Error(`DEFAULT_PLAN ${defaultName} is not one of the plans (${[...byName.keys()].join(", ")})`);
  return { defaultPlan, byName, planOf: (name) => (name === null ? defaultPlan : (byName.get(name) ?? defaultPlan)) };
}

/** A key's limits: its plan's, with the fields of its override when the plan allows overrides. */
export function effectiveRate(plan: Plan, override: RateOverride | null): RateLimits & { source: "plan" | "key" } {
  if (!override || !plan.keyRateOverrides || Object.keys(override).length === 0) return { ...plan.rate, source: "plan" };
  const merged = { ...plan.rate, ...override };
  // A plan change can leave an override below its new sustained rate; the burst never drops below it.
  return { ...merged, burstPerSecond: Math.max(merged.burstPerSecond, merged.sustainedPerSecond), source: "key" };
}
