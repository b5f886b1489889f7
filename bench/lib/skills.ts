// What the skill and marketplace benchmarks share: a JSON client for the agent API, synthetic skills,
// and percentiles.

export type Call = (route: string, body: unknown) => Promise<any>;

/** POSTs to `${url}/api/v1/agent/${prefix}${route}` with the key; throws on an error answer. */
export function agentClient(url: string, key: string, prefix = ""): Call {
  return async (route, body) => {
    const res = await fetch(`${url}/api/v1/agent/${prefix}${route}`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const json = await res.json();
    if (!res.ok) throw new Error(`${route}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  };
}

const verbs = ["audits", "generates", "migrates", "monitors", "tests", "deploys", "documents", "refactors", "profiles", "secures", "translates", "backs up"];
const objects = ["invoices", "Kafka topics", "Terraform plans", "React components", "Postgres schemas", "S3 buckets", "CSV exports", "Helm charts", "GraphQL resolvers", "cron jobs", "webhooks", "feature flags", "Redis caches", "PDF reports", "Slack alerts", "OAuth clients"];
const contexts = ["for the payments team", "before a release", "in CI", "after an incident", "for compliance reviews", "during on-call", "for new hires", "across regions"];

/** Skill number i, drawn from `rand`: a name and description in the style of real ones, a short body. */
export function syntheticSkill(i: number, rand: () => number, slugPrefix: string) {
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(rand() * xs.length)]!;
  const verb = pick(verbs);
  const object = pick(objects);
  return {
    slug: `${slugPrefix}-${i}`,
    name: `${verb} ${object} ${i}`,
    description: `${verb[0]!.toUpperCase()}${verb.slice(1)} ${object} ${pick(contexts)}, checks the result and reports problems. Use when ${object} need attention ${pick(contexts)}.`,
    content: `# Skill ${i}\n\nSteps for ${object}.\n`,
    tags: [pick(["ops", "dev", "data", "security"])],
    license: "MIT",
  };
}

export const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

/** A query text never sent before (so the server embeds it), in the words of the synthetic skills. */
export const freshQuery = (rand: () => number, ...parts: Array<string | number>) =>
  [verbs[Math.floor(rand() * verbs.length)], objects[Math.floor(rand() * objects.length)], ...parts, Math.floor(rand() * 1e9)].join(" ");
