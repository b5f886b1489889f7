import type { FastifyBaseLogger } from "fastify";

// An optional second opinion from any OpenAI-compatible chat API (POST {url}/chat/completions). One call
// per write, for all its doubtful pairs; any failure, timeout or unreadable answer yields null and the
// caller keeps the offline verdicts: the judge can never fail a write.

export interface JudgeOptions {
  /** Base URL, e.g. http://127.0.0.1:11434/v1; /chat/completions is appended. */
  url: string;
  model: string;
  apiKey?: string | undefined;
  timeoutMs: number;
}

export interface JudgePair {
  older: string;
  newer: string;
}

export interface JudgeVerdict {
  contradiction: boolean;
  reason: string;
}

/** One verdict per pair (undefined where the judge gave none), or null when the judge failed. */
export type Judge = (pairs: readonly JudgePair[]) => Promise<Array<JudgeVerdict | undefined> | null>;

const instructions = `You check an agent's memory for contradictions. For each numbered pair, decide whether the
NEWER statement contradicts the OLDER one: both are about the same subject and attribute and cannot both be
true now (another city, another number or version, a negation, an opposite preference). Elaborations, added
details, additional values ("also likes X"), related facts, and statements about a different subject are NOT
contradictions. Answer with JSON only: {"verdicts": [{"pair": <number>, "contradiction": <true|false>, "reason": "<at most 12 words>"}]}`;

function parseVerdicts(content: string, count: number): Array<JudgeVerdict | undefined> | null {
  const start = content.indexOf("{");
  const end = content.lastIndexOf("}");
  if (start < 0 || end < start) return null;
  const parsed = JSON.parse(content.slice(start, end + 1)) as { verdicts?: unknown };
  if (!Array.isArray(parsed.verdicts)) return null;
  const out: Array<JudgeVerdict | undefined> = new Array(count).fill(undefined);
  for (const v of parsed.verdicts as Array<Record<string, unknown>>) {
    const pair = Number(v?.pair);
    if (!Number.isInteger(pair) || pair < 1 || pair > count || typeof v.contradiction !== "boolean") continue;
    out[pair - 1] = { contradiction: v.contradiction, reason: typeof v.reason === "string" ? v.reason.slice(0, 200) : "" };
  }
  return out;
}

export function createJudge(options: JudgeOptions, log: FastifyBaseLogger): Judge {
  const endpoint = `${options.url.replace(/\/+$/, "")}/chat/completions`;
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
  return async (pairs) => {
    if (pairs.length === 0) return [];
    const listing = pairs.map((p, i) => `${i + 1}. OLDER: ${JSON.stringify(p.older)}\n   NEWER: ${JSON.stringify(p.newer)}`).join("\n");
    try {
      const response = await fetch(endpoint, {
        method: "POST",
        headers,
        signal: AbortSignal.timeout(options.timeoutMs),
        body: JSON.stringify({
          model: options.model,
          temperature: 0,
          messages: [
            { role: "system", content: instructions },
            { role: "user", content: listing },
          ],
        }),
      });
      if (!response.ok) throw new Error(`${endpoint} answered ${response.status}`);
      const body = (await response.json()) as { choices?: Array<{ message?: { content?: unknown } }> };
      const content = body.choices?.[0]?.message?.content;
      const verdicts = typeof content === "string" ? parseVerdicts(content, pairs.length) : null;
      if (!verdicts) throw new Error(`${endpoint} gave no readable verdicts`);
      return verdicts;
    } catch (err) {
      log.warn({ err }, "contradiction judge failed; keeping the offline verdicts");
      return null;
    }
  };
}
