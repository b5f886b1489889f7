import { describe, expect, it } from "vitest";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ConfigError, loadConfig } from "../../src/config.js";
import { usagePeriod, secondsToReset } from "../../src/usage/period.js";
import { effectiveRate } from "../../src/usage/plans.js";

describe("plans configuration", () => {
  it("has built-in unlimited, free, pro and enterprise plans, unlimited by default, all at the spec's default rate", () => {
    const { plans } = loadConfig({});
    expect([...plans.byName.keys()]).toEqual(["unlimited", "free", "pro", "enterprise"]);
    expect(plans.defaultPlan.name).toBe("unlimited");
    expect(plans.defaultPlan).toMatchObject({ memoriesStored: null, recallsPerMonth: null, costUnitsPerMonth: null });
    expect(plans.byName.get("free")).toMatchObject({ memoriesStored: 10_000, recallsPerMonth: 10_000, costUnitsPerMonth: 2_000_000 });
    for (const plan of plans.byName.values()) {
      expect(plan.rate).toEqual({ sustainedPerSecond: 100, burstPerSecond: 500, burstSeconds: 10, concurrency: 32 });
    }
    expect(plans.byName.get("enterprise")).toMatchObject({ memoriesStored: null, keyRateOverrides: true });
  });

  it("reads plans from PLANS_FILE and falls back to the default plan for an unknown name", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "plans-"));
    try {
      const file = path.join(dir, "plans.json");
      const rate = { sustainedPerSecond: 1, burstPerSecond: 2, burstSeconds: 3, concurrency: 4 };
      writeFileSync(file, JSON.stringify({ basic: { memoriesStored: 1, recallsPerMonth: null, costUnitsPerMonth: 5, rate } }));
      const { plans } = loadConfig({ PLANS_FILE: file, DEFAULT_PLAN: "basic" });
      expect(plans.planOf(null)).toMatchObject({ name: "basic", memoriesStored: 1, recallsPerMonth: null, keyRateOverrides: false });
      expect(plans.planOf("gone").name).toBe("basic");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("stops start-up naming the variable and the field of a bad plan", () => {
    const bad = { x: { memoriesStored: -1, recallsPerMonth: 1, costUnitsPerMonth: 1, rate: { sustainedPerSecond: 5, burstPerSecond: 2, burstSeconds: 1, concurrency: 1 } } };
    expect(() => loadConfig({ PLANS: JSON.stringify(bad), DEFAULT_PLAN: "x" })).toThrow(ConfigError);
    expect(() => loadConfig({ PLANS: JSON.stringify(bad), DEFAULT_PLAN: "x" })).toThrow(/PLANS: x\.memoriesStored/);
    expect(() => loadConfig({ PLANS: JSON.stringify(bad), DEFAULT_PLAN: "x" })).toThrow(/x\.rate\.burstPerSecond: must be at least sustainedPerSecond/);
    expect(() => loadConfig({ PLANS: "{not json" })).toThrow(/PLANS: cannot read plans/);
    expect(() => loadConfig({ PLANS_FILE: "/nonexistent/plans.json" })).toThrow(/PLANS_FILE: cannot read plans/);
    expect(() => loadConfig({ DEFAULT_PLAN: "gold" })).toThrow(/DEFAULT_PLAN: must be one of unlimited, free, pro, enterprise/);
    expect(() => loadConfig({ RATE_LIMIT_STORE: "redis" })).toThrow(/RATE_LIMIT_STORE/);
  });

  it("applies a key's override only when its plan allows overrides", () => {
    const { plans } = loadConfig({});
    const override = { sustainedPerSecond: 1000, burstPerSecond: 2000 };
    expect(effectiveRate(plans.byName.get("free")!, override)).toMatchObject({ sustainedPerSecond: 100, source: "plan" });
    expect(effectiveRate(plans.byName.get("enterprise")!, override)).toEqual({
      sustainedPerSecond: 1000,
      burstPerSecond: 2000,
      burstSeconds: 10,
      concurrency: 32,
      source: "key",
    });
    // An override left below a new plan's sustained rate never bursts slower than it sustains.
    expect(effectiveRate(plans.byName.get("enterprise")!, { sustainedPerSecond: 900 })).toMatchObject({ burstPerSecond: 900 });
  });
});

describe("usage periods", () => {
  it("are calendar months in UTC; Retry-After counts the seconds to the next one", () => {
    const now = new Date("2026-02-27T12:00:00Z");
    expect(usagePeriod(now)).toEqual({ start: new Date("2026-02-01T00:00:00Z"), resetsAt: new Date("2026-03-01T00:00:00Z") });
    expect(secondsToReset(now)).toBe(36 * 3600);
    expect(usagePeriod(new Date("2026-12-31T23:59:59Z")).resetsAt).toEqual(new Date("2027-01-01T00:00:00Z"));
    expect(secondsToReset(new Date("2026-12-31T23:59:59.5Z"))).toBe(1);
  });
});
