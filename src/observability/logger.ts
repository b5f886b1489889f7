import type { FastifyLoggerOptions } from "fastify";
import type { DestinationStream } from "pino";
import pretty from "pino-pretty";
import type { Config } from "../config.js";

/**
 * The server's pino options: JSON lines on stdout, or with LOG_FORMAT=pretty, coloured lines for a
 * person at a terminal. `destination` replaces stdout (the tests read the lines from it). The
 * authorization header is redacted should any line ever carry request headers.
 */
export function loggerOptions(config: Pick<Config, "LOG_LEVEL" | "LOG_FORMAT">, destination?: DestinationStream) {
  const stream = destination ?? (config.LOG_FORMAT === "pretty" ? pretty({ colorize: process.stdout.isTTY, sync: true }) : undefined);
  return {
    level: config.LOG_LEVEL,
    redact: ["req.headers.authorization", "headers.authorization"],
    ...(stream ? { stream } : {}),
  } satisfies FastifyLoggerOptions & { redact: string[] };
}
