import type { ServiceImpl } from "@connectrpc/connect";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/grpc/health/v1/health_pb.js";
import { apiError } from "../errors/api-error.js";
import type { Readiness } from "./readiness.js";

const statusOf = (ready: boolean) => (ready ? Status.SERVING : Status.NOT_SERVING);

/**
 * gRPC health checking (grpc.health.v1.Health) for gRPC clients, load balancers and Kubernetes gRPC
 * probes: every service of the server, and the server itself (service ""), is SERVING while it is
 * ready as GET /readyz reports it, and NOT_SERVING otherwise. Like /readyz it needs no key.
 */
export function healthService(readiness: Readiness, serviceNames: string[]): ServiceImpl<typeof Health> {
  const known = new Set(["", ...serviceNames]);
  return {
    async check(req) {
      if (!known.has(req.service)) throw apiError("not_found", `service ${req.service.slice(0, 100)} is not served here`);
      return { status: statusOf(await readiness.check()) };
    },
    async list() {
      const status = statusOf(await readiness.check());
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status }])) };
    },
    // Unknown services are reported, not refused: the watch stays open as the protocol asks.
    async *watch(req, ctx) {
      const isKnown = known.has(req.service);
      if (!isKnown) yield { status: Status.SERVICE_UNKNOWN };
      for await (const ready of readiness.watch(ctx.signal)) {
        if (isKnown) yield { status: statusOf(ready) };
      }
    },
  };
}
