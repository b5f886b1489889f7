import { startApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";

// A node in a process of its own, configured by its environment as src/main.ts is, with indexer settings
// other than the defaults from its first argument (JSON): small thresholds let a few writes reach them.
const app = await startApp(loadConfig(), { indexer: JSON.parse(process.argv[2] ?? "{}") });
app.fastify.log.info(`agentmem listening on ${app.url} (storage: ${app.db.kind})`);
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
