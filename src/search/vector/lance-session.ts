import { Session } from "@lancedb/lancedb";

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
    session = new Session(BigInt(caps.index), BigInt(caps.metadata));
    sessions.set(key, session);
  }
  return session;
}
