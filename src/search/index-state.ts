import { ConfigError } from "../config.js";
import type { Database } from "../db/database.js";
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

export async function writeIndexState(db: Database, model: EmbeddingModelInfo, backend: string, status: IndexState["status"]) {
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
export async function checkIndexState(db: Database, model: EmbeddingModelInfo, backend: string): Promise<void> {
  const state = await readIndexState(db);
  if (!state) return writeIndexState(db, model, backend, "ready");
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
