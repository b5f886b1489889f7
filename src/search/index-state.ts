import { ConfigError } from "../config.js";
import type { Database, Sql } from "../db/database.js";
import type { EmbeddingModelInfo } from "../embeddings/embedder.js";

// Which embedding model and backend the vector index was built with. Vectors of two models are not
// comparable, so a changed model must be re-embedded (`agentmem reindex`) before the server serves.

export interface IndexState {
  provider: string;
  model: string;
  dimensions: number;
  backend: string;
  status: "ready" | "reindexing";
}

export const describeModel = (m: { provider: string; model: string; dimensions: number }) =>
  `${m.provider}/${m.model} (${m.dimensions}-d)`;

export const sameModel = (a: Omit<IndexState, "backend" | "status">, b: EmbeddingModelInfo) =>
  a.provider === b.provider && a.model === b.model && a.dimensions === b.dimensions;

export async function readIndexState(db: Database): Promise<IndexState | undefined> {
  const [row] = await db.query<IndexState>(
    "select provider, model, dimensions, backend, status from vector_index_state where id = 1",
  );
  return row;
}

export async function writeIndexState(db: Sql, model: EmbeddingModelInfo, backend: string, status: IndexState["status"]) {
  await db.query(
    `insert into vector_index_state (id, provider, model, dimensions, backend, status) values (1, $1, $2, $3, $4, $5)
     on conflict (id) do update set provider = $1, model = $2, dimensions = $3, backend = $4, status = $5, updated_at = now()`,
    [model.provider, model.model, model.dimensions, backend, status],
  );
}

export class IndexModelMismatch extends ConfigError {
  override name = "IndexModelMismatch";
}

/** Fails start-up when the configured model differs from the one the index holds, or a reindex is unfinished. */
export async function checkIndexState(
  db: Database,
  model: EmbeddingModelInfo,
  backend: string,
  lanceLocation: string | undefined,
): Promise<void> {
  const state = await readIndexState(db);
  if (!state) await writeIndexState(db, model, backend, "ready");
  if (lanceLocation !== undefined) await checkLanceLocation(db, lanceLocation, state?.backend);
  if (!state) return;
  if (state.status === "reindexing") {
    throw new IndexModelMismatch(
      `a reindex to ${describeModel(state)} has not finished: run \`npx agentmem reindex\` to complete it`,
    );
  }
  if (!sameModel(state, model)) {
    throw new IndexModelMismatch(
      `the vector index holds embeddings of ${describeModel(state)}, but the configuration selects ${describeModel(model)}. ` +
        "Run `npx agentmem reindex` to re-embed every memory with the new model (stop the server first when storage is embedded), " +
        "or restore the previous EMBEDDING_* settings.",
    );
  }
  if (state.backend !== backend) await writeIndexState(db, model, backend, "ready");
}

export class LanceLocationMismatch extends ConfigError {
  override name = "LanceLocationMismatch";
}

const describeLocation = (location: string) =>
  location === "ephemeral" ? "a temporary directory of its own (DATA_DIR=memory://)" : `"${location}"`;

/**
 * Every node of one database must search one LanceDB index: a node with an index of its own would answer
 * recalls only from what its own indexer happened to take from the shared queue. The first LanceDB node
 * records its location; a durable location replaces an ephemeral one (its index is rebuilt from Postgres
 * by reconciliation), and any other difference stops the node. `previousBackend` is the backend recorded
 * before this start: after pgvector, the LanceDB index is rebuilt anyway and its old location is moot.
 */
export async function checkLanceLocation(db: Database, location: string, previousBackend: string | undefined): Promise<void> {
  await db.query(
    `update vector_index_state set lance_location = $1
     where id = 1 and (lance_location is null or (lance_location = 'ephemeral' and $1 <> 'ephemeral') or $2)`,
    [location, previousBackend !== undefined && previousBackend !== "lancedb"],
  );
  const [row] = await db.query<{ lance_location: string | null }>("select lance_location from vector_index_state where id = 1");
  const recorded = row?.lance_location;
  if (recorded === undefined || recorded === null || recorded === location) return;
  throw new LanceLocationMismatch(
    `this node's LanceDB index is ${describeLocation(location)}, but the index of this database is ${describeLocation(recorded)}: ` +
      (recorded === "ephemeral"
        ? "stop the node that uses a temporary index, or give every node the same LANCEDB_URI"
        : `set LANCEDB_URI=${recorded} on this node (all nodes of one database share one LanceDB location), or run \`npx agentmem reindex --force\` to rebuild the index at this node's location and make it the database's`),
  );
}

/** Makes `location` the database's LanceDB location, after `agentmem reindex --force` rebuilt the index there. */
export async function recordLanceLocation(db: Database, location: string): Promise<void> {
  await db.query("update vector_index_state set lance_location = $1 where id = 1", [location]);
}
