import { readFileSync } from "node:fs";
import { z } from "zod";
import { defaultTermsPath, readTerms, type MarketplaceTerms } from "./marketplace/terms.js";
import { builtInPlans, planCatalog, plansSchema, type PlanCatalog } from "./usage/plans.js";

const logLevels = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

export const envSchema = z.object({
  /** One port for HTTP/1.1 and HTTP/2 (h2c): REST, Connect, gRPC-Web, gRPC and MCP; 0 picks a free one. */
  PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  /** Listen address. */
  HOST: z.string().min(1).default("0.0.0.0"),
  /** Embedded storage: PGlite in DATA_DIR/pg and the LanceDB index in DATA_DIR/lance; memory:// keeps everything in memory. */
  DATA_DIR: z.string().min(1).default("./data"),
  /** A PostgreSQL 15+ server (postgres://…) instead of the embedded PGlite; needed to run several nodes. */
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
    .optional(),
  /** Connections per node to the PostgreSQL server. */
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** Recall's hot statements kept prepared on each connection (see QueryOptions.prepare); false behind a pooler that cannot keep them. */
  DATABASE_PREPARED_STATEMENTS: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
  /** PGlite's shared_buffers: it is all resident from the start (PostgreSQL's default of 128 MB cost 104 MB of RSS more than 16 MB). */
  PGLITE_SHARED_BUFFERS_BYTES: z.coerce
    .number()
    .int()
    .min(1024 * 1024)
    .max(1024 * 1024 * 1024)
    .default(32 * 1024 * 1024),
  /** Bootstrap admin secret for the admin API and the CLI (16+ characters); unset, no key can be created. */
  AGENTMEM_ADMIN_KEY: z
    .string()
    .min(16, "must be at least 16 characters")
    // Sent as `Authorization: Bearer <key>`, which accepts RFC 6750's b64token characters only.
    .regex(/^[A-Za-z0-9\-._~+/]+=*$/, "must use only letters, digits and - . _ ~ + / (then = signs)")
    .optional(),
  /** pino level of the server's log; secrets are never logged. */
  LOG_LEVEL: z.enum(logLevels).default("info"),
  /** json: one JSON object a line (for log collectors); pretty: coloured, human-readable lines. */
  LOG_FORMAT: z.enum(["json", "pretty"]).default("json"),
  /** The level of the one line logged per request; silent logs none. At info, LOG_LEVEL=warn hides them. */
  REQUEST_LOG_LEVEL: z.enum(logLevels).default("info"),
  /** Largest accepted request body, for every transport. */
  BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(4 * 1024 * 1024),
  /** How long a verified API key is trusted before it is looked up again (revocation delay on other nodes). */
  AUTH_CACHE_TTL_MS: z.coerce.number().int().min(0).default(5000),
  /** Bytes of verified keys kept in memory (about 600 bytes a key); refused secrets get a quarter more, apart. */
  AUTH_CACHE_BYTES: z.coerce.number().int().min(0).default(4 * 1024 * 1024),
  /**
   * How long a client may take to send a request body, on every transport; then the request fails and
   * its stream is closed. At most Node's own HTTP/1.1 request timeout (5 minutes), which answers without a body.
   */
  REQUEST_BODY_TIMEOUT_MS: z.coerce.number().int().min(1).max(300_000).default(10_000),
  /** Grace period for in-flight requests at shutdown. */
  SHUTDOWN_GRACE_MS: z.coerce.number().int().min(0).default(5000),

  /** use-lite: built-in Universal Sentence Encoder lite (offline); openai: any OpenAI-compatible API; transformers: a local ONNX model. */
  EMBEDDING_PROVIDER: z.enum(["use-lite", "openai", "transformers"]).default("use-lite"),
  /** Model name (openai) or model directory name under EMBEDDING_MODEL_PATH (transformers). */
  EMBEDDING_MODEL: z.string().min(1).optional(),
  /** Base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1 (Ollama). */
  EMBEDDING_URL: z.string().url("must be an http(s) URL").optional(),
  /** Key sent to the OpenAI-compatible embeddings API. */
  EMBEDDING_API_KEY: z.string().min(1).optional(),
  /** Output dimensions asked of the OpenAI-compatible API; default the model's own. */
  EMBEDDING_DIMENSIONS: z.coerce.number().int().min(1).max(8192).optional(),
  /** Directory holding local ONNX models for the transformers provider (remote models are never fetched). */
  EMBEDDING_MODEL_PATH: z.string().min(1).optional(),
  /** Texts per model call when indexing. */
  EMBEDDING_BATCH_SIZE: z.coerce.number().int().min(1).max(2048).default(32),
  /** Processes running the built-in model, each with its own copy (160 to 215 MB idle); default one. */
  EMBEDDING_WORKERS: z.coerce.number().int().min(1).max(64).optional(),
  /** Threads each of those processes runs the model on; default one per core, at most two. */
  EMBEDDING_THREADS: z.coerce.number().int().min(1).max(64).optional(),
  /** How much nicer than the server the built-in model's processes run: behind its own threads for the CPU. */
  EMBEDDING_NICENESS: z.coerce.number().int().min(0).max(19).default(10),
  /** Bytes of query embeddings (vector and text) kept in memory, so repeated queries skip the model; 0 disables. */
  EMBEDDING_CACHE_BYTES: z.coerce.number().int().min(0).default(16 * 1024 * 1024),
  /** Bytes of vectors of recently written texts (vector and text) kept, so detection and the indexer embed a text once; 0 disables. */
  EMBEDDING_WRITE_CACHE_BYTES: z.coerce.number().int().min(0).default(16 * 1024 * 1024),

  /** Check new and edited memories for contradictions with active ones (embeds on the write path). */
  CONTRADICTIONS_ENABLED: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
  /** Candidates per new memory from each of the vector and keyword searches. */
  CONTRADICTION_CANDIDATES: z.coerce.number().int().min(1).max(100).default(8),
  /** Optional judge: base URL of an OpenAI-compatible chat API, e.g. http://127.0.0.1:11434/v1. */
  CONTRADICTION_JUDGE_URL: z.string().url("must be an http(s) URL").optional(),
  /** Model name sent to the contradiction judge. */
  CONTRADICTION_JUDGE_MODEL: z.string().min(1).optional(),
  /** Key sent to the contradiction judge. */
  CONTRADICTION_JUDGE_API_KEY: z.string().min(1).optional(),
  /** The judge's answer is awaited this long; then the offline verdicts stand. */
  CONTRADICTION_JUDGE_TIMEOUT_MS: z.coerce.number().int().min(1).default(3000),

  /** Optional reranker: the full URL of a /rerank endpoint (TEI, Cohere, Jina, vLLM). */
  RERANK_URL: z.string().url("must be an http(s) URL").optional(),
  /** Model name sent to the reranker as `model`. */
  RERANK_MODEL: z.string().min(1).optional(),
  /** Key sent to the reranker as `Authorization: Bearer …`. */
  RERANK_API_KEY: z.string().min(1).optional(),
  /** The reranker's answer is awaited this long; then the fused order stands. */
  RERANK_TIMEOUT_MS: z.coerce.number().int().min(1).max(60_000).default(2000),
  /** The best fused candidates sent to the reranker per recall. */
  RERANK_CANDIDATES: z.coerce.number().int().min(1).max(400).default(30),

  /** Recall receipts (why, supersedes, receipt); callers can still opt out per request. */
  RECEIPTS_ENABLED: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
  /** Recall traces older than this are deleted. */
  TRACE_RETENTION_DAYS: z.coerce.number().min(0.001).default(30),

  /** false runs an API-only node: writes queue vectors for the nodes that index. */
  INDEXER_ENABLED: z.enum(["true", "false"]).default("true").transform((v) => v === "true"),
  /** How long the index maintainer's lease lasts without renewal: a crashed maintainer is replaced after this. */
  INDEX_MAINTAINER_LEASE_MS: z.coerce.number().int().min(100).default(10_000),

  /** Where vectors are searched: lancedb (embedded, DATA_DIR/lance or LANCEDB_URI) or pgvector (in PostgreSQL). */
  VECTOR_BACKEND: z.enum(["lancedb", "pgvector"]).default("lancedb"),
  /** LanceDB location: a directory (default DATA_DIR/lance) or an object store URI such as s3://bucket/path. */
  LANCEDB_URI: z.string().min(1).optional(),
  /**
   * Which nodes write the LanceDB index: maintainer (only the holder of the maintainer lease; the others
   * queue their jobs in the outbox) or every-node. Default maintainer for an object store URI, where
   * concurrent commits are lost unless the store honours conditional puts (docs/how-to/several-nodes-object-storage.md),
   * every-node for a directory.
   */
  LANCEDB_WRITERS: z.enum(["maintainer", "every-node"]).optional(),
  /** How stale a node's view of the LanceDB index may be (other nodes' writes); default 0 for a directory, 1000 for object storage. */
  LANCEDB_READ_CONSISTENCY_MS: z.coerce.number().int().min(0).max(60_000).optional(),
  /** LanceDB's cache of index data (IVF partitions, full-text and scalar index pages); LanceDB's own default is 6 GB. */
  LANCEDB_INDEX_CACHE_BYTES: z.coerce.number().int().min(0).default(384 * 1024 * 1024),
  /** LanceDB's cache of file metadata and schemas; LanceDB's own default is 1 GB. */
  LANCEDB_METADATA_CACHE_BYTES: z.coerce.number().int().min(0).default(64 * 1024 * 1024),
  /**
   * 8-bit copies of a collection's vectors, held while the whole table fits (512 dimensions: about 130,000
   * rows), so hybrid search reads no vectors from LanceDB; 0 holds none.
   */
  LANCEDB_HELD_VECTORS_BYTES: z.coerce.number().int().min(0).default(64 * 1024 * 1024),

  /** A JSON file of plans ({"name": {memoriesStored, recallsPerMonth, costUnitsPerMonth, rate, keyRateOverrides}}). */
  PLANS_FILE: z.string().min(1).optional(),
  /** The same JSON inline; PLANS_FILE and PLANS replace the built-in free, pro and enterprise plans. */
  PLANS: z.string().min(1).optional(),
  /** The plan of workspaces no admin has put on another. */
  DEFAULT_PLAN: z.string().min(1).default("unlimited"),
  /** Where rate-limit buckets live: memory (one node), postgres (nodes sharing DATABASE_URL), off (no rate or concurrency limits). */
  RATE_LIMIT_STORE: z.enum(["memory", "postgres", "off"]).default("memory"),

  /** The public skills marketplace; off, a server shares nothing (its routes answer MARKETPLACE_DISABLED). */
  MARKETPLACE_ENABLED: z.enum(["true", "false"]).default("false").transform((v) => v === "true"),
  /** Markdown content terms with a `version` in YAML frontmatter; default src/marketplace/default-terms.md. */
  MARKETPLACE_TERMS_FILE: z.string().min(1).optional(),
  /** SMTP server for author emails, e.g. smtp://user:pass@mail.example.com:587; unset, emails stay unsent in the outbox. */
  SMTP_URL: z
    .string()
    .regex(/^smtps?:\/\//, "must be an smtp:// or smtps:// URL")
    .optional(),
  /** Sender of author emails. */
  EMAIL_FROM: z.string().min(3).default("agentmem <agentmem@localhost>"),
  /** Attempts per email before it is marked failed. */
  EMAIL_MAX_ATTEMPTS: z.coerce.number().int().min(1).max(50).default(8),
  /** Pause after the first failed attempt; it doubles after each further failure, up to an hour. */
  EMAIL_RETRY_BASE_MS: z.coerce.number().int().min(1).default(30_000),

  /** The built web console served at /console; default dist/console of this installation (`npm run build`). */
  CONSOLE_DIR: z.string().min(1).optional(),
});

/**
 * Variables that capped caches by entries: an entry's size varies a hundredfold with its text, so caches are
 * capped by bytes now. A deployment still setting one is told which variable replaced it, rather than having
 * it ignored.
 */
const replacedVariables: Record<string, string> = {
  EMBEDDING_CACHE_SIZE: "EMBEDDING_CACHE_BYTES",
  EMBEDDING_WRITE_CACHE_SIZE: "EMBEDDING_WRITE_CACHE_BYTES",
};

function replacedVariableIssues(env: Record<string, string | undefined>): string[] {
  return Object.entries(replacedVariables)
    .filter(([old]) => env[old] !== undefined)
    .map(([old, now]) => `  ${old}: no longer read; caches are capped in bytes: set ${now} (e.g. 16777216; a 512-d query vector with its text takes about 2.5 KB)`);
}

/** Plans from PLANS_FILE, PLANS or the built-ins, validated; issues are reported under the variable's name. */
function readPlans(env: z.output<typeof envSchema>, ctx: z.RefinementCtx): PlanCatalog {
  if (env.PLANS_FILE && env.PLANS) ctx.addIssue({ code: "custom", path: ["PLANS"], message: "set PLANS_FILE or PLANS, not both" });
  const variable = env.PLANS_FILE ? "PLANS_FILE" : "PLANS";
  let raw: unknown = builtInPlans;
  try {
    if (env.PLANS_FILE) raw = JSON.parse(readFileSync(env.PLANS_FILE, "utf8"));
    else if (env.PLANS) raw = JSON.parse(env.PLANS);
  } catch (err) {
    ctx.addIssue({ code: "custom", path: [variable], message: `cannot read plans: ${(err as Error).message}` });
    return z.NEVER;
  }
  const plans = plansSchema.safeParse(raw);
  if (!plans.success) {
    for (const issue of plans.error.issues) {
      ctx.addIssue({ code: "custom", path: [variable], message: `${issue.path.join(".")}: ${issue.message}` });
    }
    return z.NEVER;
  }
  if (!(env.DEFAULT_PLAN in plans.data)) {
    ctx.addIssue({ code: "custom", path: ["DEFAULT_PLAN"], message: `must be one of ${Object.keys(plans.data).join(", ")}` });
    return z.NEVER;
  }
  return planCatalog(plans.data, env.DEFAULT_PLAN);
}

/** The marketplace terms from MARKETPLACE_TERMS_FILE or the shipped default; a bad file is reported under the variable. */
function readMarketplaceTerms(env: z.output<typeof envSchema>, ctx: z.RefinementCtx): MarketplaceTerms {
  try {
    return readTerms(env.MARKETPLACE_TERMS_FILE ?? defaultTermsPath);
  } catch (err) {
    ctx.addIssue({ code: "custom", path: ["MARKETPLACE_TERMS_FILE"], message: `cannot read terms: ${(err as Error).message}` });
    return z.NEVER;
  }
}

/** Prefix of the variables handed to LanceDB as storage options: LANCEDB_STORAGE_ENDPOINT becomes `endpoint`. */
export const lanceStoragePrefix = "LANCEDB_STORAGE_";

/**
 * LanceDB's object store options from LANCEDB_STORAGE_* (endpoint, region, access_key_id,
 * secret_access_key, allow_http, …; LanceDB's storage page lists them). LanceDB also reads the standard
 * AWS_* variables itself; an option given here wins over them.
 */
export const lanceStorageOptionsOf = (env: Record<string, string>): Record<string, string> =>
  Object.fromEntries(
    Object.entries(env)
      .filter(([name]) => name.startsWith(lanceStoragePrefix) && name.length > lanceStoragePrefix.length)
      .map(([name, value]) => [name.slice(lanceStoragePrefix.length).toLowerCase(), value]),
  );

const configSchema = envSchema.transform((env, ctx) => ({ ...env, plans: readPlans(env, ctx), marketplaceTerms: readMarketplaceTerms(env, ctx) }));

export type Config = z.infer<typeof configSchema> & { lanceStorageOptions: Record<string, string> };

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Reads and validates configuration from the environment; throws one error listing every bad variable. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ""));
  const parsed = configSchema.safeParse(cleaned);
  const lines = [...replacedVariableIssues(cleaned), ...(parsed.success ? [] : parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`))];
  if (lines.length > 0 || !parsed.success) throw new ConfigError(`invalid configuration:\n${lines.join("\n")}`);
  return { ...parsed.data, lanceStorageOptions: lanceStorageOptionsOf(cleaned as Record<string, string>) };
}
