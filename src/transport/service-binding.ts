import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { FastifyBaseLogger } from "fastify";
import type { Authenticator } from "../accounts/authenticator.js";
import { principalKey, type Principal } from "../accounts/principal.js";
import { apiError } from "../errors/api-error.js";
import { ConnectError } from "@connectrpc/connect";

/** A service implementation with the policy every transport applies to its calls. */
export interface ServiceBinding {
  service: DescService;
  impl: ServiceImpl<DescService>;
}

type UnaryFn = (req: unknown, ctx: HandlerContext) => Promise<unknown>;

export interface GuardOptions {
  auth: Authenticator;
  /** The role a key must have to call the service. */
  role: Principal["role"];
  log: FastifyBaseLogger;
}

/**
 * Wraps every method once, at start-up, so Connect, gRPC and REST share one policy: the key is
 * authenticated and must have the service's role, and unexpected failures become server_error
 * without leaking internals.
 */
export function bindService<S extends DescService>(service: S, impl: ServiceImpl<S>, opts: GuardOptions): ServiceBinding {
  const guarded: Record<string, UnaryFn> = {};
  for (const [name, fn] of Object.entries(impl as Record<string, UnaryFn>)) {
    guarded[name] = async (req, ctx) => {
      const principal = await opts.auth.authenticate(ctx.requestHeader);
      if (principal.role !== opts.role) {
        throw apiError("forbidden", `${principal.role} keys cannot call ${service.typeName}`);
      }
      ctx.values.set(principalKey, principal);
      try {
        return await fn(req, ctx);
      } catch (err) {
        if (err instanceof ConnectError) throw err;
        opts.log.error({ err, rpc: `${service.typeName}/${ctx.method.name}` }, "unexpected failure");
        throw apiError("server_error", "internal server error");
      }
    };
  }
  return { service, impl: guarded as ServiceImpl<DescService> };
}
