// s3rver 3.7.1 ships no types: the part the tests use.
declare module "s3rver" {
  interface S3rverOptions {
    port?: number;
    address?: string;
    silent?: boolean;
    directory: string;
    configureBuckets?: Array<{ name: string }>;
  }
  /** The filesystem store behind the server (lib/stores/filesystem.js). */
  interface FilesystemStore {
    getResourcePath(bucket: string, key: string, resource: string): string;
    putObject(object: { bucket: string; key: string; content: Buffer | NodeJS.ReadableStream; metadata: Record<string, string> }): Promise<{ size: number; md5: string }>;
    putMetadata(bucket: string, key: string, metadata: Record<string, string>, md5?: string): Promise<void>;
  }
  export default class S3rver {
    store: FilesystemStore;
    constructor(options: S3rverOptions);
    run(): Promise<{ address: string; port: number }>;
    close(): Promise<void>;
  }
}
