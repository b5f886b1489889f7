import { Code } from "@connectrpc/connect";

// The API's error codes: one HTTP status and one Connect code each (docs/reference/api/errors.md lists them).
export const errorCodes = {
  invalid_request: { http: 400, connect: Code.InvalidArgument, summary: "Malformed body or missing field." },
  auth_failed: { http: 401, connect: Code.Unauthenticated, summary: "Bad or expired API key." },
  cost_ceiling: { http: 402, connect: Code.ResourceExhausted, summary: "Per-account cost ceiling or included quota exhausted." },
  forbidden: { http: 403, connect: Code.PermissionDenied, summary: "Key not scoped to this container." },
  MARKETPLACE_DISABLED: { http: 403, connect: Code.PermissionDenied, summary: "Marketplace feature flag is off for this deployment." },
  not_found: { http: 404, connect: Code.NotFound, summary: "Memory or trace ID does not exist." },
  method_not_allowed: { http: 405, connect: Code.Unimplemented, summary: "The path exists, not with this HTTP method; Allow names its methods." },
  COPYLEFT_LOCKED: { http: 409, connect: Code.FailedPrecondition, summary: "Unpublish or deprecate attempted on a fork." },
  APPEAL_CONFLICT: { http: 409, connect: Code.Aborted, summary: "The skill is not removed, or an appeal is already pending." },
  VERSION_YANKED: { http: 409, connect: Code.FailedPrecondition, summary: "The skill version was withdrawn by its author or an admin." },
  already_exists: { http: 409, connect: Code.AlreadyExists, summary: "A skill with this slug already exists in the workspace." },
  version_conflict: { http: 409, connect: Code.Aborted, summary: "The skill's current version is not expectedVersion." },
  quota_exhausted: { http: 429, connect: Code.ResourceExhausted, summary: "Plan cap reached; see Retry-After." },
  rate_limited: { http: 429, connect: Code.ResourceExhausted, summary: "Too many requests or concurrent requests." },
  server_error: { http: 500, connect: Code.Internal, summary: "Server-side failure. Retries are safe." },
} as const;

export type ErrorCode = keyof typeof errorCodes;
