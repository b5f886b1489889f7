// What every CLI command that talks to a server shares: where the server is, and failures worth one line.

/** A mistake the person running the CLI can fix; printed as one line, without a stack. */
export class CliError extends Error {}

/** AGENTMEM_URL, else the server `npm start` runs with the same environment: http://127.0.0.1:$PORT (8080). */
export function serverUrl(env: Record<string, string | undefined> = process.env): string {
  const url = env.AGENTMEM_URL || `http://127.0.0.1:${env.PORT || 8080}`;
  return url.replace(/\/+$/, "");
}

/** Why a request never got an answer, in Node's words (ECONNREFUSED, ENOTFOUND), not fetch's "fetch failed". */
export function unreachableReason(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err as Error).message;
}

/** fetch against the server; a server that cannot be reached is a CliError naming the URL. */
export async function fetchServer(path: string, init: RequestInit = {}): Promise<Response> {
  const base = serverUrl();
  try {
    return await fetch(base + path, init);
  } catch (err) {
    throw new CliError(`cannot reach ${base} (${unreachableReason(err)}): is the server running? Set AGENTMEM_URL or PORT`);
  }
}
