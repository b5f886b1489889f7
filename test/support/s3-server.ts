import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import S3rver from "s3rver";

// An S3-compatible server (s3rver, from npm) on loopback, holding its objects in a temporary directory.
// It honours no conditional puts: two LanceDB commits of one version both succeed and the later one wins,
// which is what a store without them does (docs/how-to/several-nodes-object-storage.md).

export interface S3Server {
  bucket: string;
  /** The settings that point a node, or a LanceDB connection, at the server. */
  env: Record<string, string>;
  /** The same as LanceDB storage options. */
  storageOptions: Record<string, string>;
  close(): Promise<void>;
}

export async function startS3Server(bucket = "agentmem"): Promise<S3Server> {
  const directory = await mkdtemp(path.join(os.tmpdir(), "agentmem-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const storageOptions = {
    endpoint: `http://127.0.0.1:${port}`,
    allow_http: "true",
    region: "us-east-1",
    access_key_id: "S3RVER",
    secret_access_key: "S3RVER",
  };
  return {
    bucket,
    storageOptions,
    env: Object.fromEntries(Object.entries(storageOptions).map(([k, v]) => [`LANCEDB_STORAGE_${k.toUpperCase()}`, v])),
    async close() {
      await server.close();
      await rm(directory, { recursive: true, force: true });
    },
  };
}
