import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import S3rver from "s3rver";

// An S3-compatible server (s3rver, from npm) on loopback, holding its objects in a temporary directory.
// It honours no conditional puts: two LanceDB commits of one version both succeed and the later one wins,
// which is what a store without them does (docs/how-to/several-nodes-object-storage.md).

/**
 * Makes the store's puts atomic, as S3's are: s3rver writes an object's file in place (and answers before
 * a buffered body is on disk), so a concurrent GET could read a manifest half written, which no S3 store
 * shows. Each file is written aside and renamed into place, the metadata before the object.
 */
function atomicPuts(store: S3rver["store"]): void {
  const scratch = (key: string) => `${key}.${randomBytes(6).toString("hex")}.partial`;
  const putMetadataInPlace = store.putMetadata.bind(store);
  store.putMetadata = async (bucket, key, metadata, md5) => {
    const aside = scratch(key);
    await putMetadataInPlace(bucket, aside, metadata, md5);
    await rename(store.getResourcePath(bucket, aside, "metadata.json"), store.getResourcePath(bucket, key, "metadata.json"));
    if (md5) await rename(store.getResourcePath(bucket, aside, "object.md5"), store.getResourcePath(bucket, key, "object.md5"));
  };
  store.putObject = async (object) => {
    const chunks: Buffer[] = [];
    if (Buffer.isBuffer(object.content)) chunks.push(object.content);
    else for await (const chunk of object.content) chunks.push(Buffer.from(chunk as Buffer));
    const content = Buffer.concat(chunks);
    const md5 = createHash("md5").update(content).digest("hex");
    const file = store.getResourcePath(object.bucket, object.key, "object");
    await mkdir(path.dirname(file), { recursive: true });
    await store.putMetadata(object.bucket, object.key, object.metadata, md5);
    const aside = `${file}.${randomBytes(6).toString("hex")}.partial`;
    await writeFile(aside, content);
    await rename(aside, file);
    return { size: content.length, md5 };
  };
}

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
  atomicPuts(server.store);
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
