import net from "node:net";
import { pino } from "pino";
import { ConfigError, loadConfig } from "./config.js";
import { loggerOptions } from "./observability/logger.js";

const firstKeyHint =
  "AGENTMEM_ADMIN_KEY is not set, so no API key can be created: restart with AGENTMEM_ADMIN_KEY=<a secret of 16+ characters>, " +
  "then run `npx agentmem keys create --workspace <name> --container <name>`";

/** One line for failures a person can fix (configuration, a taken port); anything else keeps its stack. */
function startFailure(err: unknown): unknown {
  if (err instanceof ConfigError) return err.message;
  const { code, port, address } = err as NodeJS.ErrnoException & { port?: number; address?: string };
  if (code === "EADDRINUSE") return `agentmem: cannot listen on ${address}:${port}: the port is in use (another agentmem?); stop it or set PORT`;
  if (code === "EACCES") return `agentmem: cannot listen on ${address}:${port}: permission denied; set PORT to 1024 or above`;
  if (code === "EADDRNOTAVAIL") return `agentmem: cannot listen on ${address}:${port}: no such address here; check HOST`;
  return err;
}

/** Fails in a second, not after storage and the model have loaded, when the port cannot be had (the real listen still reports a later loss). */
async function assertPortFree(port: number, host: string): Promise<void> {
  if (port === 0) return;
  const probe = net.createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(port, host, resolve);
  });
  await new Promise((resolve) => probe.close(resolve));
}

try {
  const config = loadConfig();
  if (!config.AGENTMEM_ADMIN_KEY) {
    const { stream, ...options } = loggerOptions(config);
    (stream ? pino(options, stream) : pino(options)).warn(firstKeyHint);
  }
  await assertPortFree(config.PORT, config.HOST);
  // Loaded once the port is known to be free: the storage and model libraries take seconds to import.
  const { startApp } = await import("./app.js");
  const app = await startApp(config);
  app.fastify.log.info(`agentmem listening on ${app.url} (storage: ${app.db.kind})`);
  let closing = false;
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    app.fastify.log.info({ signal }, "shutting down");
    app.close().then(
      () => process.exit(0),
      (err: unknown) => {
        app.fastify.log.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
} catch (err) {
  console.error(startFailure(err));
  process.exit(1);
}
