import type { RateLimits } from "./plans.js";

// The rate model: every request takes one token from each of two buckets.
//
// - sustained: refills at sustainedPerSecond (r) and holds (burstPerSecond - r) * burstSeconds + 1
//   tokens: the burst budget. While a key sends at the burst rate p it drains by p - r per second, so
//   a full bucket lasts exactly burstSeconds (the + 1 is the request that opens the burst); then the
//   key is held to r. Idle time refills it at r.
// - peak: refills at burstPerSecond (p) and holds p tokens (one second at the burst rate), so no burst
//   runs faster than p for longer than an instant.
//
// Defaults (100/s, 500/s, 10 s): sustained holds (500 - 100) * 10 + 1 = 4001; peak holds 500. Sending
// 500/s from rest is admitted for 10 s (4000 / 400), then 100/s; 40 s idle refills the budget.
// The sustained bucket never holds less than the peak one, so a plan without burst (p = r) still admits
// one second of requests at once.

export interface BucketShape {
  sustainedRate: number;
  sustainedCapacity: number;
  peakRate: number;
  peakCapacity: number;
}

export function bucketShape(rate: RateLimits): BucketShape {
  const peakCapacity = rate.burstPerSecond;
  return {
    sustainedRate: rate.sustainedPerSecond,
    sustainedCapacity: Math.max((rate.burstPerSecond - rate.sustainedPerSecond) * rate.burstSeconds + 1, peakCapacity),
    peakRate: rate.burstPerSecond,
    peakCapacity,
  };
}

/** Tokens left in each bucket at `at` (seconds); a key never seen has both buckets full. */
export interface BucketState {
  sustained: number;
  peak: number;
  at: number;
}

export const fullBucket = (shape: BucketShape, at: number): BucketState => ({
  sustained: shape.sustainedCapacity,
  peak: shape.peakCapacity,
  at,
});

export interface RateDecision {
  admitted: boolean;
  /** X-RateLimit-Limit: the most requests the key can send at once from rest. */
  limit: number;
  /** X-RateLimit-Remaining: requests it can send at once now (after this one). */
  remaining: number;
  /** X-RateLimit-Reset: whole seconds until remaining is back to limit. */
  resetSeconds: number;
  /** Retry-After when refused: whole seconds until one request is admitted again (at least 1). */
  retryAfterSeconds: number;
}

// Tokens within this much of a whole number count as that number, so float residue never turns
// 3.9999999 tokens into 3 remaining.
export const epsilon = 1e-9;

/** Tokens after refilling from `state.at` to `now` (a clock going backwards refills nothing). */
export function refill(state: BucketState, shape: BucketShape, now: number): BucketState {
  const elapsed = Math.max(0, now - state.at);
  return {
    sustained: Math.min(shape.sustainedCapacity, state.sustained + elapsed * shape.sustainedRate),
    peak: Math.min(shape.peakCapacity, state.peak + elapsed * shape.peakRate),
    at: Math.max(now, state.at),
  };
}

/** Takes one token from both buckets if both have one. */
export function take(state: BucketState, shape: BucketShape, now: number): { state: BucketState; admitted: boolean } {
  const filled = refill(state, shape, now);
  const admitted = filled.sustained >= 1 - epsilon && filled.peak >= 1 - epsilon;
  return { admitted, state: admitted ? { ...filled, sustained: filled.sustained - 1, peak: filled.peak - 1 } : filled };
}

const whole = (tokens: number) => Math.floor(tokens + epsilon);

/** What the headers report for a bucket state right after a take. */
export function decide(state: BucketState, shape: BucketShape, admitted: boolean): RateDecision {
  const limit = whole(Math.min(shape.sustainedCapacity, shape.peakCapacity));
  const remaining = Math.max(0, whole(Math.min(state.sustained, state.peak)));
  const secondsUntil = (tokens: number) =>
    Math.max(0, (tokens - state.sustained) / shape.sustainedRate, (tokens - state.peak) / shape.peakRate);
  return {
    admitted,
    limit,
    remaining,
    resetSeconds: Math.ceil(secondsUntil(limit) - epsilon),
    retryAfterSeconds: Math.max(1, Math.ceil(secondsUntil(1) - epsilon)),
  };
}
