// Memory bodies that look like what agents store: short, varied sentences. Varied text matters because
// identical rows compress and cache better than real data would.

const subjects = [
  "The payments service",
  "Maria from the data platform team",
  "The staging Kubernetes cluster",
  "Our nightly CI pipeline",
  "The customer account in Berlin",
  "The search indexer",
  "Kenji, the on-call engineer this week,",
  "The mobile release train",
  "The billing export job",
  "The design review meeting",
];

const predicates = [
  "prefers deployments to happen before noon on",
  "was migrated to PostgreSQL 15 on",
  "started failing when the cache is cold since",
  "asked for a weekly summary starting",
  "must not be restarted without approval until",
  "moved its on-call rotation to the Lisbon office on",
  "doubled its memory limit after the incident on",
  "switched from REST polling to webhooks on",
];

const details = [
  "",
  " because the previous setup dropped events under load",
  " after a long discussion in the architecture channel",
  " so retries should use exponential backoff with jitter",
  " and the runbook was updated to match",
];

const topics = ["ops", "people", "billing", "ci", "search", "release", "infra", "support"];

const pick = <T>(list: readonly T[], i: number): T => list[i % list.length]!;

/** The i-th sentence; consecutive indexes differ in every part. */
export function sentence(i: number): string {
  const day = new Date(Date.UTC(2024, 0, 1) + (i % 700) * 86_400_000).toISOString().slice(0, 10);
  return `${pick(subjects, i)} ${pick(predicates, i * 7 + 3)} ${day}${pick(details, i * 3 + 1)} (note #${i}).`;
}

/** A create body in REST JSON: a single fact with two tags. */
export function memoryInput(i: number): { content: string; type: "fact"; tags: string[] } {
  return { content: sentence(i), type: "fact", tags: [pick(topics, i), `batch-${i % 10}`] };
}
