import { describe, expect, it } from "vitest";
import { defaultRate, type RateLimits } from "../../src/usage/plans.js";
import { memoryRateLimitStore } from "../../src/usage/rate-limit-store.js";
import { bucketShape, decide, fullBucket, take, type BucketState } from "../../src/usage/token-bucket.js";

// Pure tests of the rate model with an injected clock (seconds).

/** Offers `perSecond` requests a second, evenly spaced, for `seconds`; returns admissions per whole second. */
function drive(rate: RateLimits, perSecond: number, seconds: number, start: BucketState | null = null, t0 = start?.at ?? 0) {
  const shape = bucketShape(rate);
  let state = start ?? fullBucket(shape, t0);
  const admittedPerSecond = Array.from({ length: seconds }, () => 0);
  for (let i = 0; i < perSecond * seconds; i++) {
    const now = t0 + i / perSecond;
    const result = take(state, shape, now);
    state = result.state;
    if (result.admitted) admittedPerSecond[Math.floor(now - t0)]! += 1;
  }
  return { admittedPerSecond, state };
}

describe("the default rate model (100/s sustained, 500/s bursts for 10 s)", () => {
  it("has a 4001-token burst budget refilled at 100/s and a 500-token peak bucket refilled at 500/s", () => {
    expect(defaultRate).toEqual({ sustainedPerSecond: 100, burstPerSecond: 500, burstSeconds: 10, concurrency: 32 });
    expect(bucketShape(defaultRate)).toEqual({ sustainedRate: 100, sustainedCapacity: 4001, peakRate: 500, peakCapacity: 500 });
  });

  it("admits 500 requests a second for exactly 10 seconds, then 100 a second", () => {
    const { admittedPerSecond } = drive(defaultRate, 500, 20);
    expect(admittedPerSecond.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => 500));
    for (const n of admittedPerSecond.slice(11)) expect(n).toBe(100);
  });

  it("admits 100 a second indefinitely", () => {
    const { admittedPerSecond } = drive(defaultRate, 100, 120);
    expect(admittedPerSecond.every((n) => n === 100)).toBe(true);
  });

  it("never admits more than 500 in an instant, and refuses the 501st", () => {
    const shape = bucketShape(defaultRate);
    let state = fullBucket(shape, 0);
    const outcomes: boolean[] = [];
    for (let i = 0; i < 501; i++) {
      const r = take(state, shape, 0);
      state = r.state;
      outcomes.push(r.admitted);
    }
    expect(outcomes.filter(Boolean)).toHaveLength(500);
    expect(outcomes[500]).toBe(false);
  });

  it("holds a key to 100/s after its burst, however hard it sends", () => {
    const { admittedPerSecond } = drive(defaultRate, 2000, 30);
    // The first second admits the full peak bucket, then one request per 2 ms of its refill.
    expect(admittedPerSecond[0]).toBe(999);
    expect(admittedPerSecond.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(4001 + 100 * 30);
    for (const n of admittedPerSecond.slice(10)) expect(n).toBe(100);
  });

  it("refills the burst budget after 40 s idle", () => {
    const spent = drive(defaultRate, 500, 12).state;
    const sum = (a: number[]) => a.reduce((x, y) => x + y, 0);
    expect(sum(drive(defaultRate, 500, 10, spent, spent.at + 30).admittedPerSecond)).toBeLessThan(5000); // not yet
    const { admittedPerSecond } = drive(defaultRate, 500, 12, spent, spent.at + 40);
    expect(admittedPerSecond.slice(0, 10)).toEqual(Array.from({ length: 10 }, () => 500));
  });

  it("reports limit, remaining and reset: remaining falls per request and is back at the limit after reset", () => {
    const shape = bucketShape(defaultRate);
    let state = fullBucket(shape, 0);
    const remaining: number[] = [];
    let last = decide(state, shape, true);
    for (let i = 0; i < 500; i++) {
      const r = take(state, shape, 0);
      state = r.state;
      last = decide(state, shape, r.admitted);
      remaining.push(last.remaining);
    }
    expect(last.limit).toBe(500);
    expect(remaining.slice(0, 3)).toEqual([499, 498, 497]);
    expect(last.remaining).toBe(0);
    expect(last.resetSeconds).toBe(1); // the peak bucket refills in one second
    const refused = take(state, shape, 0);
    expect(decide(refused.state, shape, refused.admitted)).toMatchObject({ admitted: false, remaining: 0, retryAfterSeconds: 1 });

    const after = take(state, shape, last.resetSeconds);
    expect(decide(after.state, shape, after.admitted)).toMatchObject({ admitted: true, remaining: 499 });
  });

  it("after the burst budget is spent, Reset counts the time until 500 can be sent at once again", () => {
    const { state } = drive(defaultRate, 500, 10); // sustained bucket empty, peak full
    const shape = bucketShape(defaultRate);
    expect(decide(state, shape, true).resetSeconds).toBe(5); // 500 tokens at 100/s
    expect(decide(state, shape, true).remaining).toBe(0);
  });

  it("counts a clock going backwards as no time passing", () => {
    const shape = bucketShape(defaultRate);
    const state = { sustained: 0, peak: 0, at: 100 };
    expect(take(state, shape, 50)).toMatchObject({ admitted: false, state: { sustained: 0, peak: 0, at: 100 } });
  });
});

describe("bucket shapes of other plans", () => {
  it("keeps at least one second of requests when a plan has no burst", () => {
    expect(bucketShape({ sustainedPerSecond: 10, burstPerSecond: 10, burstSeconds: 10, concurrency: 1 })).toMatchObject({
      sustainedCapacity: 10,
      peakCapacity: 10,
    });
    expect(bucketShape({ sustainedPerSecond: 10, burstPerSecond: 20, burstSeconds: 10, concurrency: 1 })).toMatchObject({
      sustainedCapacity: 101,
      peakCapacity: 20,
    });
  });
});

describe("the in-memory store", () => {
  it("applies the model per caller with its own clock", async () => {
    let now = 0;
    const store = memoryRateLimitStore(() => now);
    const shape = bucketShape({ sustainedPerSecond: 1, burstPerSecond: 3, burstSeconds: 1, concurrency: 1 });
    const a = [];
    for (let i = 0; i < 4; i++) a.push((await store.take("key:a", shape)).admitted);
    expect(a).toEqual([true, true, true, false]);
    expect((await store.take("key:b", shape)).admitted).toBe(true);
    now = 1;
    expect(await store.take("key:a", shape)).toMatchObject({ admitted: true, remaining: 0 });
    await store.close();
  });
});
