import { connect, Session, type Connection } from "@lancedb/lancedb";
import { meterLanceCache } from "./lance-cache-meter.js";
import { defaultReadConsistencySeconds } from "./lance-consistency.js";
import { useLanceScratch } from "./lance-scratch.js";

/** LanceDB's cache caps, in bytes. */
export interface LanceCacheBytes {
  index: number;
  metadata: number;
}

// LanceDB gives every connection without a session its own caches of up to 6 GB (index data: IVF
// partitions, full-text and scalar index pages) and 1 GB (file metadata), filled as queries touch them:
// memory that grows with the data searched. One session per cap, shared by the memories' and the skills'
// connections, so the caps bound the process.
const sessions = new Map<string, Session>();

export function lanceSession(caps: LanceCacheBytes): Session {
  const key = `${caps.index}/${caps.metadata}`;
  let session = sessions.get(key);
  if (!session) {
    const created = new Session(BigInt(caps.index), BigInt(caps.metadata));
    sessions.set(key, created);
    meterLanceCache(() => Number(created.sizeBytes()));
    session = created;
  }
  return session;
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
  /** The caches this connection shares; LanceDB's own default is 6 GB + 1 GB per connection. */
  session?: Session;
  /** Object store options (endpoint, region, credentials, allow_http); LanceDB also reads AWS_* itself. */
  storageOptions?: Record<string, string>;
  /**
   * Every commit of this process to a table waits for the one before it, optimizes included: on a store
   * that does not honour conditional puts two commits of one version both succeed and the later one
   * drops the other's (a compaction beside a merge-insert left a fragment read past its rows).
   */
  serialCommits?: boolean;
  /** Bytes of its table's vectors a collection holds in 8 bits, if they all fit (see lanceRowCache). */
  heldVectorsBytes?: number;
}

/**
 * Our default for LanceDB's LANCE_FLAT_SEARCH_PERCENT_THRESHOLD. A full-text search whose filter matches at
 * most this percent of the rows visits every matching row; above it, it walks the query's postings and
 * skips the rows the filter drops. Both return the same hits. The visit's cost grows with the rows matched:
 * with LanceDB's default of 10, a tag matching 4% of 1M memories cost 14.2 ms of CPU a search against 5.6
 * unfiltered; with 1, 6.4. Below 1% the visit is the cheaper (0.5%: 5.3 against 5.9 walked). Measured by
 * `npx tsx bench/keyword-filters.ts --size 1000000 --threshold <n>`.
 */
export const flatSearchPercent = "1";

export function connectLance(options: LanceConnectionOptions): Promise<Connection> {
  // LanceDB reads it once, at its first full-text search, which comes after a connection; an operator's own value stands.
  process.env.LANCE_FLAT_SEARCH_PERCENT_THRESHOLD ??= flatSearchPercent;
  useLanceScratch();
  // The session goes in the options: connect(uri, options, session) drops its third argument (0.37.1).
  return connect(options.uri, {
    readConsistencyInterval: options.readConsistencySeconds ?? defaultReadConsistencySeconds(options.uri),
    ...(options.session ? { session: options.session } : {}),
    ...(options.storageOptions && Object.keys(options.storageOptions).length > 0 ? { storageOptions: options.storageOptions } : {}),
  });
}
