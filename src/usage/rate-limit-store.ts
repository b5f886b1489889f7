import type { Sql } from "../db/database.js";
import { decide, epsilon, fullBucket, take, type BucketShape, type BucketState, type RateDecision } from "./token-bucket.js";

/** Where the token buckets of every caller live. */
export interface RateLimitStore {
  /** Takes one request's tokens from the caller's buckets, atomically. */
  take(bucket: string, shape: BucketShape): Promise<RateDecision>;
  close(): Promise<void>;
}

// A bucket idle this long is dropped; it would be (nearly) full again anyway, which is what a missing one means.
const idleSeconds = 3600;
const maxBuckets = 100_000;

/** Buckets in this process: exact for one node. `clock` is in seconds. */
export function memoryRateLimitStore(clock: () => number = () => performance.now() / 1000): RateLimitStore {
  const buckets = new Map<string, BucketState>();
  const sweep = (now: number) => {
    for (const [k, s] of buckets) if (now - s.at > idleSeconds) buckets.delete(k);
    // Still full (e.g. a flood of unknown addresses): forget the oldest, which only ever admits more.
    for (const k of buckets.keys()) {
      if (buckets.size < maxBuckets) break;
      buckets.delete(k);
    }
  };
  return {
    async take(bucket, shape) {
      const now = clock();
      if (buckets.size >= maxBuckets) sweep(now);
      const result = take(buckets.get(bucket) ?? fullBucket(shape, now), shape, now);
      buckets.set(bucket, result.state);
      return decide(result.state, shape, result.admitted);
    },
    close: async () => buckets.clear(),
  };
}

// The same refill-and-take as token-bucket.ts, in one statement on the database's clock, so nodes
// sharing the database share each caller's buckets without locks held across round trips.
// $1 bucket, $2 sustained rate, $3 sustained capacity, $4 peak rate, $5 peak capacity.
const sustainedNow = `least($3, b.sustained + greatest(0, excluded.at - b.at) * $2)`;
const peakNow = `least($5, b.peak + greatest(0, excluded.at - b.at) * $4)`;
const admits = `(${sustainedNow} >= 1 - ${epsilon} and ${peakNow} >= 1 - ${epsilon})`;
const takeStatement = `
  insert into rate_limit_buckets as b (bucket, sustained, peak, at, admitted)
  values ($1, $3::float8 - 1, $5::float8 - 1, extract(epoch from clock_timestamp()), true)
  on conflict (bucket) do update set
    sustained = ${sustainedNow} - case when ${admits} then 1 else 0 end,
    peak = ${peakNow} - case when ${admits} then 1 else 0 end,
    at = greatest(b.at, excluded.at),
    admitted = ${admits}
  returning sustained, peak, at, admitted`;

/** Buckets in PostgreSQL (a server or PGlite): shared by every node on the database. */
export function postgresRateLimitStore(sql: Sql): RateLimitStore {
  const purge = setInterval(() => {
    sql
      .query("delete from rate_limit_buckets where at < extract(epoch from clock_timestamp()) - $1", [idleSeconds])
      .catch(() => undefined); // retried at the next interval; stale rows only cost space
  }, idleSeconds * 1000);
  purge.unref();
  return {
    async take(bucket, shape) {
      const [row] = await sql.query<BucketState & { admitted: boolean }>(takeStatement, [
        bucket,
        shape.sustainedRate,
        shape.sustainedCapacity,
        shape.peakRate,
        shape.peakCapacity,
      ], { prepare: true });
      return decide(row!, shape, row!.admitted);
    },
    close: async () => clearInterval(purge),
  };
}
