import { connect, Session, type Connection } from "@lancedb/lancedb";
import { meterLanceCache } from "./lance-cache-meter.js";
import { defaultReadConsistencySeconds } from "./lance-consistency.js";

/** LanceDB's cache caps, in bytes. */
export interface LanceCacheBytes {
  index: number;
  metadata: number;
}

/** Where and how a collection connects to LanceDB. */
export interface LanceConnectionOptions {
  /** A directory or an object store URI (s3://…). */
  uri: string;
  /**
   * Seconds after which a read first checks for writes made by other processes (this handle sees its
   * own writes at once); default defaultReadConsistencySeconds(uri).
   */
  readConsistencySeconds?: number;
  /**
   * Caps of the connection's caches. LanceDB caches index data (IVF partitions, full-text and scalar index
   * pages) and file metadata as queries touch them, by default up to 6 GB + 1 GB per connection.
   */
  cache?: LanceCacheBytes;
}

/** A connection with caches of its own, counted in /metrics until it is closed. */
export interface LanceConnection {
  connection: Connection;
  close(): void;
}

export async function connectLance(options: LanceConnectionOptions): Promise<LanceConnection> {
  const session = options.cache ? new Session(BigInt(options.cache.index), BigInt(options.cache.metadata)) : undefined;
  // The session goes in the options: connect(uri, options, session) drops its third argument (0.37.1).
  const connection = await connect(options.uri, {
    readConsistencyInterval: options.readConsistencySeconds ?? defaultReadConsistencySeconds(options.uri),
    ...(session ? { session } : {}),
  });
  const unmeter = session ? meterLanceCache(() => Number(session.sizeBytes())) : () => undefined;
  return {
    connection,
    close() {
      unmeter();
      connection.close();
    },
  };
}
