// Plans for the usage tests: small limits so tests reach them quickly. "free" stays the default
// (and the admin key's rate), at the spec's default rate.

const defaultRate = { sustainedPerSecond: 100, burstPerSecond: 500, burstSeconds: 10, concurrency: 32 };
const unlimited = { memoriesStored: null, recallsPerMonth: null, costUnitsPerMonth: null };

export const testPlans = {
  free: { ...unlimited, rate: defaultRate },
  // Rate: the sustained bucket holds (4.015625 - 0.015625) * 1.75 + 1 = 8 tokens and refills one per
  // 64 s, so nothing refills it during a test; the peak bucket holds 4 (and a bit) and refills in 1 s.
  tight: { ...unlimited, rate: { sustainedPerSecond: 1 / 64, burstPerSecond: 4 + 1 / 64, burstSeconds: 1.75, concurrency: 8 } },
  // 20 requests at once, then one per 64 s: whatever the spacing, a key gets 20 during a test.
  shared: { ...unlimited, rate: { sustainedPerSecond: 1 / 64, burstPerSecond: 20, burstSeconds: 0, concurrency: 32 } },
  narrow: { ...unlimited, rate: { ...defaultRate, concurrency: 1 } },
  small: { memoriesStored: 5, recallsPerMonth: 3, costUnitsPerMonth: 1_000_000, rate: defaultRate },
  cheap: { memoriesStored: null, recallsPerMonth: null, costUnitsPerMonth: 30, rate: defaultRate },
  wide: { ...unlimited, rate: { ...defaultRate, concurrency: 200 }, keyRateOverrides: true },
};

export const planEnv = { PLANS: JSON.stringify(testPlans), DEFAULT_PLAN: "free" };
