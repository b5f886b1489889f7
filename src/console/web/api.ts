import { Code, ConnectError, createClient, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AdminService } from "../../../gen/agent/v1/admin_pb.js";
import { MarketplaceService } from "../../../gen/agent/v1/marketplace_pb.js";
import { MemoryService } from "../../../gen/agent/v1/memory_pb.js";
import { ModerationService } from "../../../gen/agent/v1/moderation_pb.js";
import { RecallService } from "../../../gen/agent/v1/recall_pb.js";
import { SkillService } from "../../../gen/agent/v1/skill_pb.js";
import { StatsService } from "../../../gen/agent/v1/stats_pb.js";
import { ErrorInfoSchema } from "../../../gen/google/rpc/error_details_pb.js";
import { currentKey, expireSession } from "./session.js";

// The console is a client generated from the protos: Connect JSON to the same origin, the key in a header.

const authorize: Interceptor = (next) => async (req) => {
  const key = currentKey();
  if (key !== null && !req.header.has("authorization")) req.header.set("authorization", `Bearer ${key}`);
  try {
    return await next(req);
  } catch (err) {
    // A key revoked or rotated while signed in: back to the sign-in page.
    if (key !== null && ConnectError.from(err).code === Code.Unauthenticated) expireSession();
    throw err;
  }
};

const transport = createConnectTransport({ baseUrl: window.location.origin, interceptors: [authorize] });

export const api = {
  memories: createClient(MemoryService, transport),
  recall: createClient(RecallService, transport),
  skills: createClient(SkillService, transport),
  marketplace: createClient(MarketplaceService, transport),
  stats: createClient(StatsService, transport),
  admin: createClient(AdminService, transport),
  moderation: createClient(ModerationService, transport),
};

/** An error as the service reports it: its code (the REST error code) and message. */
export interface ApiProblem {
  code: string;
  message: string;
  field?: string;
}

export function describeProblem(err: unknown): ApiProblem {
  const e = ConnectError.from(err);
  const info = e.findDetails(ErrorInfoSchema)[0];
  return { code: info?.reason || Code[e.code] || "error", message: e.rawMessage, field: info?.metadata["field"] };
}
