import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import { CliError, serverUrl, unreachableReason } from "./server.js";

// `agentmem wait`: blocks until the server answers GET /readyz with 200, so scripts can start the server
// in the background and go on once it serves (the quick start does).

export const waitUsage = `  agentmem wait [--timeout <seconds>]      wait until the server at AGENTMEM_URL is ready (default 120 s)`;

const pollMs = 250;

/** Runs `agentmem wait`; resolves to the exit code: 0 once ready, 1 when the timeout passed first. */
export async function waitCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({ args, options: { timeout: { type: "string" } } });
  const timeoutS = Number(values.timeout ?? 120);
  if (!Number.isFinite(timeoutS) || timeoutS <= 0) throw new CliError("--timeout must be a positive number of seconds");
  const url = `${serverUrl()}/readyz`;
  const deadline = Date.now() + timeoutS * 1000;
  const noAnswer = "no answer yet";
  let last = noAnswer;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) throw new CliError(`${url} was not ready within ${timeoutS} s (${last})`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(left) });
      const text = await res.text();
      if (res.ok) {
        console.log(text);
        return 0;
      }
      last = `HTTP ${res.status} ${text}`.trim();
    } catch (err) {
      // The deadline cut this attempt short: the reason an earlier one failed says more.
      const cutShort = (err as Error).name === "TimeoutError";
      if (!cutShort || last === noAnswer) last = cutShort ? "no answer in time" : unreachableReason(err);
    }
    await sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())));
  }
}
