import { ConfigError } from "../../config.js";

// A node on object storage checks at start that it can list its location, so a wrong endpoint, bucket,
// credential or scheme stops it with one line naming what to set, not with a LanceDB error of several
// hundred characters at its first search.

export class ObjectStoreUnreachable extends ConfigError {
  override name = "ObjectStoreUnreachable";
}

const settings = "LANCEDB_STORAGE_ENDPOINT or AWS_ENDPOINT, LANCEDB_STORAGE_REGION or AWS_REGION, and the credentials (LANCEDB_STORAGE_* or AWS_*)";

/** What a LanceDB object store error says, in a few words: the store's own error code and message, or the transport's failure. */
export function storeFailureOf(message: string): string {
  const code = /<Code>([^<]+)<\/Code>/.exec(message)?.[1];
  const said = /<Message>([^<]+)<\/Message>/.exec(message)?.[1];
  if (code) return said ? `${code}: ${said}` : code;
  if (/BadScheme/.test(message)) return "the endpoint is plain http, which is refused unless LANCEDB_STORAGE_ALLOW_HTTP=true (or AWS_ALLOW_HTTP=true)";
  const status = /status: (\d+)/.exec(message)?.[1];
  if (status) return `HTTP status ${status}`;
  if (/error sending request|connect|dns|timed out/i.test(message)) return "no connection to the endpoint";
  return message.split("\n")[0]!.slice(0, 200);
}

/** The one-line start-up error for an object store location that cannot be listed. */
export const unreachableStoreMessage = (location: string, failure: string) =>
  `LANCEDB_URI=${location} cannot be reached: ${failure}; check ${settings}`;

/** Lists the location; throws ObjectStoreUnreachable if that fails. */
export async function checkObjectStore(location: string, storageOptions: Record<string, string>): Promise<void> {
  const { connect } = await import("@lancedb/lancedb");
  try {
    const connection = await connect(location, Object.keys(storageOptions).length > 0 ? { storageOptions } : {});
    await connection.tableNames();
    connection.close();
  } catch (err) {
    throw new ObjectStoreUnreachable(unreachableStoreMessage(location, storeFailureOf(String((err as Error).message ?? err))));
  }
}
