// Creates a PGlite data directory in a worker thread (src/db/pglite.ts): creating one grows the wasm
// memory of the instance that does it to ~600 MB, which a wasm memory never returns; in a worker that
// memory goes with the thread, instead of staying in the server until a garbage collection happens to run.
import { workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

const pg = await PGlite.create(workerData.location);
await pg.close();
