import { randomBytes } from "node:crypto";
import pg from "pg";
import { throwawayPostgres } from "../../test/support/postgres-cluster.js";
import { onCleanUp } from "./run.js";

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A new, empty database on the server of `serverUrl`, so data sizes start at zero and repeated runs
 * do not measure each other's rows. The connecting role needs CREATEDB.
 */
export async function scratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `agentmem_bench_${randomBytes(6).toString("hex")}`;
  await adminQuery(serverUrl, `create database ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => adminQuery(serverUrl, `drop database if exists ${name} with (force)`) };
}

/**
 * The URL of a scratch database on the server of `serverUrl`, or on a throwaway cluster started with
 * `settings` (postgres -c options) when none is given; both are gone when the bench ends (onCleanUp).
 */
export async function benchDatabase(serverUrl: string | undefined, settings = ""): Promise<string> {
  let server = serverUrl;
  if (!server) {
    console.error("starting a throwaway PostgreSQL cluster…");
    const cluster = await throwawayPostgres(settings);
    onCleanUp(() => cluster.stop());
    server = cluster.url;
  }
  const database = await scratchDatabase(server);
  onCleanUp(() => database.drop());
  return database.url;
}

async function adminQuery(serverUrl: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
