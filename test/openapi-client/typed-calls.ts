// An OpenAPI-typed client of the REST API, as a team would write it: openapi-fetch with the types
// openapi-typescript generates from gen/openapi.json. test/transport/openapi-served.test.ts copies this
// file next to those generated types (./openapi.d.ts), type-checks it, then runs typedCalls against the
// server. tsconfig.json leaves this directory out: the types exist only in that test's directory.
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./openapi.js";

/** A few real calls; every request here must type-check against the document. */
export async function typedCalls(baseUrl: string, key: string) {
  const client = createClient<paths>({ baseUrl, headers: { authorization: `Bearer ${key}` } });
  const created = await client.POST("/api/v1/agent/memories", {
    body: { content: "The user drinks green tea every morning", type: "preference", tags: ["drinks"], severity: "low" },
  });
  const id = created.data?.ids?.[0] ?? "";
  const batch = await client.POST("/api/v1/agent/memories", {
    body: { memories: [{ content: "The office kettle is in the kitchen", type: "fact" }] },
  });
  // A partial update: no field of the body is required.
  const patched = await client.PATCH("/api/v1/agent/memories/{id}", { params: { path: { id } }, body: { tags: ["drinks", "morning"] } });
  const read = await client.GET("/api/v1/agent/memories/{id}", { params: { path: { id } } });
  const recalled = await client.POST("/api/v1/agent/recall", { body: { query: "green tea", searchMode: "keyword" } });
  const traceId = recalled.data?._meta?.traceId ?? "";
  const trace = await client.GET("/api/v1/agent/recall/traces/{traceId}", { params: { path: { traceId } } });
  const skill = await client.POST("/api/v1/agent/skills", {
    body: { name: "tea-brewing", description: "Brews tea. Use when someone asks for tea.", content: "# Tea\n\nBoil the water." },
  });
  const missing = await client.GET("/api/v1/agent/memories/{id}", { params: { path: { id: "mem_01jd000000000000000000000" } } });
  return {
    statuses: {
      created: created.response.status,
      batch: batch.response.status,
      patched: patched.response.status,
      read: read.response.status,
      recalled: recalled.response.status,
      trace: trace.response.status,
      skill: skill.response.status,
      missing: missing.response.status,
    },
    id,
    memory: read.data,
    recalledIds: recalled.data?.memories?.map((m) => m.id) ?? [],
    // The recorded request is a JSON object (google.protobuf.Struct): untyped.
    traceSearchMode: (trace.data?.request as Record<string, unknown> | undefined)?.searchMode,
    skillSlug: skill.data?.skill?.slug,
    missingCode: missing.error?.error?.code,
  };
}

/** Calls the type-check must refuse (never run): each lacks what the document requires or names it wrongly. */
export function refusedCalls(client: Client<paths>, error: components["schemas"]["Error"]): void {
  // @ts-expect-error one memory needs its type
  void client.POST("/api/v1/agent/memories", { body: { content: "no type" } });
  // @ts-expect-error one memory needs its content
  void client.POST("/api/v1/agent/memories", { body: { type: "fact" } });
  // @ts-expect-error every memory of a batch needs its type
  void client.POST("/api/v1/agent/memories", { body: { memories: [{ content: "no type" }] } });
  // @ts-expect-error a recall needs its query
  void client.POST("/api/v1/agent/recall", { body: { limit: 3 } });
  // @ts-expect-error a skill needs its description
  void client.POST("/api/v1/agent/skills", { body: { name: "tea", content: "# Tea" } });
  // @ts-expect-error REST spells enum values in lower case
  void client.POST("/api/v1/agent/recall", { body: { query: "tea", searchMode: "SEARCH_MODE_KEYWORD" } });
  // @ts-expect-error the path parameter is traceId, as README spells it
  void client.GET("/api/v1/agent/recall/traces/{traceId}", { params: { path: { trace_id: "trc_x" } } });
  // @ts-expect-error Error.code is one of the error codes
  if (error.code === "not_a_code") return;
}
