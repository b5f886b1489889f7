import type { DescService } from "@bufbuild/protobuf";
import type { HandlerContext, ServiceImpl } from "@connectrpc/connect";
import type { FastifyBaseLogger } from "fastify";
import type { Authenticator } from "../accounts/authenticator.js";
import { principalKey, type Principal } from "../accounts/principal.js";
import { apiError } from "../errors/api-error.js";
import { ConnectError, createContextKey } from "@connectrpc/connect";
import type { InFlightGate } from "../in-flight-gate.js";
import { withHeaders, type Admission, type Admitted } from "../usage/admission.js";
import { noteCaller, noteError, requestLogKey } from "../observability/request-log.js";
import { withProtoEnumNames } from "./enum-messages.js";
import { assertStorableStrings } from "./storable-strings.js";

/** A service implementation with the policy every transport applies to its calls. */
export interface ServiceBinding {
  service: DescService;
  impl: ServiceImpl<DescService>;
  /**
   * Why every call of the service is refused (a feature turned off), or undefined. Transports ask
   * once the key is checked and before the request is read, so the caller learns that first.
   */
  refusal(): ConnectError | undefined;
}

type UnaryFn = (req: unknown, ctx: HandlerContext) => Promise<unknown>;

export interface GuardOptions {
  auth: Authenticator;
  /** The role a key must have to call the service. */
  role: Principal["role"];
  log: FastifyBaseLogger;
  admission: Admission;
  /** Every call runs through it, so shutdown can wait for the calls in flight. */
  calls: InFlightGate;
  /** See ServiceBinding.refusal; none by default. */
  refusal?: () => ConnectError | undefined;
}

/** Transports whose HTTP requests the rate-limit hook (rate-limit-hook.ts) admits before any RPC runs. */
const admittedPerHttpRequest = new Set(["rest", "mcp"]);
/** Transports that spell enum values the REST way ("fact"); the others (gRPC, Connect) use proto names. */
const restEnumSpelling = new Set(["rest", "mcp"]);

/** The client's address, set by the Connect/gRPC transport: the rate-limit caller of a request without a valid key. */
export const clientAddressKey = createContextKey<string>("unknown", { description: "client address" });

/**
 * Wraps every method once, at start-up, so Connect, gRPC and REST share one policy: the key is
 * authenticated and must have the service's role, the call is admitted against the key's rate and
 * concurrency limits (whose headers every response carries, as metadata and, on errors, trailers),
 * and unexpected failures become server_error without leaking internals. REST and MCP requests are
 * admitted earlier, by the HTTP hook (rate-limit-hook.ts), which also covers failures before any RPC.
 */
export function bindService<S extends DescService>(service: S, impl: ServiceImpl<S>, opts: GuardOptions): ServiceBinding {
  const guarded: Record<string, UnaryFn> = {};
  for (const [name, fn] of Object.entries(impl as Record<string, UnaryFn>)) {
    guarded[name] = (req, ctx) => opts.calls.run(() => guardedCall(fn, req, ctx));
  }
  const refusal = opts.refusal ?? (() => undefined);
  return { service, impl: guarded as ServiceImpl<DescService>, refusal };

  /** One call under that policy. */
  async function guardedCall(fn: UnaryFn, req: unknown, ctx: HandlerContext): Promise<unknown> {
    const authenticated = await opts.auth.authenticate(ctx.requestHeader).then(
      (principal) => ({ principal, error: undefined }),
      (error: unknown) => ({ principal: undefined, error }),
    );
    const logFields = ctx.values.get(requestLogKey);
    if (authenticated.principal) noteCaller(logFields, authenticated.principal);
    let admitted: Admitted | undefined;
    if (!admittedPerHttpRequest.has(ctx.protocolName)) {
      admitted = await opts.admission.admit(authenticated.principal, ctx.values.get(clientAddressKey)).catch((err: unknown) => {
        noteError(logFields, err);
        throw err;
      });
      for (const [header, value] of admitted.headers) ctx.responseHeader.set(header, value);
    }
    try {
      if (!authenticated.principal) throw authenticated.error;
      const principal = authenticated.principal;
      if (principal.role !== opts.role) {
        throw apiError("forbidden", `${principal.role} keys cannot call ${service.typeName}`);
      }
      const refused = refusal();
      if (refused) throw refused;
      ctx.values.set(principalKey, principal);
      assertStorableStrings(ctx.method.input, req as object);
      return await fn(req, ctx);
    } catch (err) {
      noteError(logFields, err);
      if (err instanceof ConnectError) {
        const named = restEnumSpelling.has(ctx.protocolName) ? err : withProtoEnumNames(err, ctx.method.input);
        throw withHeaders(named, admitted?.headers ?? []);
      }
      opts.log.error({ err, rpc: `${service.typeName}/${ctx.method.name}` }, "unexpected failure");
      throw withHeaders(apiError("server_error", "internal server error"), admitted?.headers ?? []);
    } finally {
      admitted?.release();
    }
  }
}
