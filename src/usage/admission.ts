import type { ConnectError } from "@connectrpc/connect";
import type { Principal } from "../accounts/principal.js";
import { apiError } from "../errors/api-error.js";
import { InFlight } from "./in-flight.js";
import { effectiveRate, type PlanCatalog } from "./plans.js";
import type { RateLimitStore } from "./rate-limit-store.js";
import { bucketShape, type RateDecision } from "./token-bucket.js";

/** Response headers (lower case, as gRPC metadata needs) of one admitted request. */
export type ResponseHeaders = ReadonlyArray<readonly [string, string]>;

export interface Admitted {
  headers: ResponseHeaders;
  /** Ends the request's concurrency slot; safe to call more than once. */
  release(): void;
}

/**
 * Admits a request against its caller's rate and concurrency limits, or throws rate_limited with
 * the rate headers and Retry-After as error metadata. A caller is an API key; a request without a
 * valid key is limited by client address with the default plan's limits, so key guessing is
 * limited too.
 */
export interface Admission {
  admit(principal: Principal | undefined, address: string): Promise<Admitted>;
}

const noLimits: Admitted = { headers: [], release: () => undefined };

export function rateHeaders(d: RateDecision): ResponseHeaders {
  return [
    ["x-ratelimit-limit", String(d.limit)],
    ["x-ratelimit-remaining", String(d.remaining)],
    ["x-ratelimit-reset", String(d.resetSeconds)],
  ];
}

/** Adds headers to an error's metadata: REST, Connect and gRPC (as trailers) send them with the error. */
export function withHeaders(err: ConnectError, headers: ResponseHeaders): ConnectError {
  for (const [name, value] of headers) err.metadata.set(name, value);
  return err;
}

export function createAdmission(store: RateLimitStore | null, plans: PlanCatalog): Admission {
  if (store === null) return { admit: async () => noLimits };
  const inFlight = new InFlight();

  return {
    async admit(principal, address) {
      const caller = principal ? `key:${principal.keyId}` : `ip:${address}`;
      const rate = principal
        ? effectiveRate(plans.planOf(principal.plan), principal.rateOverride)
        : plans.defaultPlan.rate;
      const decision = await store.take(caller, bucketShape(rate));
      const headers = rateHeaders(decision);
      if (!decision.admitted) {
        throw withHeaders(
          apiError("rate_limited", `too many requests: this key may send ${rate.sustainedPerSecond} per second, bursts of ${rate.burstPerSecond} per second for ${rate.burstSeconds} s`, {
            limit: "rate",
            retryAfter: String(decision.retryAfterSeconds),
          }),
          [...headers, ["retry-after", String(decision.retryAfterSeconds)]],
        );
      }
      const release = inFlight.acquire(caller, rate.concurrency);
      if (!release) {
        throw withHeaders(
          apiError("rate_limited", `too many concurrent requests: this key may have ${rate.concurrency} in flight`, {
            limit: "concurrency",
            retryAfter: "1",
          }),
          [...headers, ["retry-after", "1"]],
        );
      }
      return { headers, release };
    },
  };
}
