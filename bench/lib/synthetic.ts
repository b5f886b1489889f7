// Deterministic synthetic memories and queries for recall benchmarks: sentences from templates over
// vocabularies of people, projects, tools, places, preferences and numbers, so that keyword and semantic
// search see realistic selectivity (a name matches ~1-2% of memories, a rare error code a handful).

/** mulberry32: a small, fast, seedable PRNG; returns floats in [0, 1). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const people = [
  "Alice", "Bob", "Carol", "Dmitri", "Elena", "Farid", "Grace", "Hiroshi", "Ines", "Jamal", "Kenji", "Lena",
  "Mateo", "Nadia", "Oliver", "Priya", "Quentin", "Rosa", "Sven", "Tamara", "Umar", "Valentina", "Wei", "Xavier",
  "Yara", "Zoltan", "Amara", "Bruno", "Chloe", "Diego", "Esther", "Felix", "Gita", "Hugo", "Isla", "Jonas",
  "Keiko", "Luca", "Maya", "Nils", "Olga", "Pablo", "Rania", "Samir", "Tess", "Ulrich", "Vera", "Yusuf",
  "Zara", "Aiden", "Beatriz", "Cyrus", "Dana", "Emil", "Freya", "Gustavo", "Hana", "Ivan", "Julia", "Kofi",
];
const projects = [
  "payments", "checkout", "search", "billing", "onboarding", "analytics", "notifications", "mobile app",
  "data warehouse", "recommendation engine", "identity service", "inventory", "shipping", "support portal",
  "fraud detection", "pricing", "ledger", "marketing site", "feature flags", "audit log", "reporting",
  "chat widget", "image pipeline", "email gateway", "scheduler", "API gateway", "partner portal", "catalog",
  "loyalty program", "tax engine", "warehouse robots", "video transcoder", "design system", "status page",
  "edge cache", "crash reporter", "translation service", "forecasting", "subscription service", "map tiles",
];
const tools = [
  "PostgreSQL", "Redis", "Kafka", "Kubernetes", "Terraform", "Grafana", "Prometheus", "Jenkins", "GitHub Actions",
  "Docker", "Elasticsearch", "RabbitMQ", "Vault", "Nginx", "Envoy", "Airflow", "Spark", "dbt", "Snowflake",
  "BigQuery", "ClickHouse", "MongoDB", "Cassandra", "Sentry", "Datadog", "PagerDuty", "Jira", "Linear", "Figma",
  "Vim", "VS Code", "IntelliJ", "Emacs", "Bazel", "Gradle", "webpack", "Vite", "pnpm", "Poetry", "Rust",
  "Go", "TypeScript", "Python", "Kotlin", "Swift", "Flutter", "React", "Svelte", "Django", "Rails",
];
const places = [
  "Berlin", "Munich", "Lisbon", "Madrid", "Paris", "London", "Dublin", "Amsterdam", "Copenhagen", "Stockholm",
  "Oslo", "Helsinki", "Warsaw", "Prague", "Vienna", "Zurich", "Milan", "Rome", "Athens", "Istanbul", "Cairo",
  "Nairobi", "Lagos", "Cape Town", "Dubai", "Mumbai", "Bangalore", "Singapore", "Tokyo", "Osaka", "Seoul",
  "Sydney", "Auckland", "Toronto", "Montreal", "New York", "Austin", "Denver", "Seattle", "Mexico City",
];
const preferences = [
  "dark mode", "tabs over spaces", "short stand-ups", "written updates over meetings", "async code review",
  "morning deploys", "pair programming", "trunk-based development", "squash merges", "verbose logging",
  "green tea", "oat milk in coffee", "vegetarian lunches", "standing desks", "quiet focus time on Fridays",
  "video off in calls", "detailed commit messages", "feature branches", "small pull requests", "typed APIs",
  "monospace fonts", "mechanical keyboards", "window seats on flights", "early flights", "spicy food",
  "remote work on Mondays", "Slack threads over email", "weekly one-on-ones", "cycling to the office", "jazz while coding",
];
const activities = ["code review", "prototyping", "data analysis", "debugging", "writing docs", "load testing", "release planning", "incident response"];
const components = ["cache layer", "auth middleware", "job queue", "database schema", "rate limiter", "webhook handler", "CSV exporter", "search index", "session store", "payment retries"];
const channels = ["Slack", "email", "phone", "SMS", "Teams", "Signal", "the issue tracker", "WhatsApp"];
const foods = ["ramen", "tacos", "falafel", "sushi", "pizza", "curry", "pho", "dumplings", "salads", "burritos"];
const weekdays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"];
const monthsList = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
const companies = ["Acme", "Globex", "Initech", "Umbrella", "Hooli", "Stark Industries", "Wayne Enterprises", "Tyrell", "Soylent", "Cyberdyne", "Wonka", "Vandelay"];
const plans = ["starter", "team", "business", "enterprise"];
const statuses = ["500", "502", "503", "504", "429"];

type Pick = <T>(list: readonly T[]) => T;

interface Gen {
  pick: Pick;
  int(min: number, max: number): number;
}

const gen = (random: () => number): Gen => ({
  pick: (list) => list[Math.floor(random() * list.length)]!,
  int: (min, max) => min + Math.floor(random() * (max - min + 1)),
});

const code = (g: Gen) => `${g.pick(["ERR", "E", "ZX", "PAY", "DB", "NET"])}-${g.int(100, 9999)}`;
const date = (g: Gen) => `${g.int(1, 28)} ${g.pick(monthsList)} ${g.int(2021, 2025)}`;
const two = <T>(g: Gen, list: readonly T[]): [T, T] => {
  const a = g.pick(list);
  let b = g.pick(list);
  while (b === a) b = g.pick(list);
  return [a, b];
};

const templates: Array<(g: Gen) => string> = [
  (g) => `${g.pick(people)} prefers ${g.pick(preferences)} and dislikes ${g.pick(preferences)}.`,
  (g) => {
    const [a, b] = two(g, tools);
    return `${g.pick(people)} prefers ${a} over ${b} for ${g.pick(activities)}.`;
  },
  (g) => `The ${g.pick(projects)} deploy to ${g.pick(["staging", "production", "the canary"])} failed with error ${code(g)} after ${g.int(2, 9)} retries.`,
  (g) => {
    const [a, b] = two(g, places);
    return `${g.pick(people)} moved from ${a} to ${b} in ${g.pick(monthsList)} ${g.int(2019, 2025)}.`;
  },
  (g) => `${g.pick(people)} is the tech lead of the ${g.pick(projects)} team and reviews pull requests on ${g.pick(weekdays)}s.`,
  (g) => `Build ${g.int(1000, 99999)} of ${g.pick(projects)} took ${g.int(3, 95)} minutes on the ${g.pick(tools)} runners.`,
  (g) => `${g.pick(people)}'s favourite lunch is ${g.pick(foods)}; the team usually eats near the ${g.pick(places)} office.`,
  (g) => {
    const [a, b] = two(g, tools);
    return `Use ${a} ${g.int(1, 17)}.${g.int(0, 12)} for ${g.pick(projects)}; ${b} ${g.int(1, 9)}.${g.int(0, 9)} breaks the ${g.pick(components)} tests.`;
  },
  (g) => `The ${g.pick(projects)} ${g.pick(components)} stores its data in ${g.pick(tools)} with a retention of ${g.int(7, 400)} days.`,
  (g) => `${g.pick(people)} will be on vacation in ${g.pick(places)} from ${date(g)} for ${g.int(3, 21)} days.`,
  (g) => `Incident ${code(g)}: the ${g.pick(components)} of ${g.pick(projects)} returned HTTP ${g.pick(statuses)} errors for ${g.int(2, 180)} minutes on ${date(g)}.`,
  (g) => {
    const [a, b] = two(g, channels);
    return `${g.pick(people)} asked to be contacted via ${a}, not ${b}, about ${g.pick(projects)} issues.`;
  },
  (g) => `The on-call rotation for ${g.pick(projects)} switches every ${g.pick(weekdays)} at ${g.int(7, 18)}:00 ${g.pick(places)} time.`,
  (g) => `Customer ${g.pick(companies)} in ${g.pick(places)} pays ${g.int(49, 25000)} EUR per month for the ${g.pick(plans)} plan of ${g.pick(projects)}.`,
  (g) => {
    const [a, b] = two(g, people);
    const [t1, t2] = two(g, tools);
    return `Meeting notes ${date(g)}: ${a} and ${b} agreed to migrate ${g.pick(projects)} from ${t1} to ${t2}.`;
  },
  (g) => `${g.pick(people)} owns the ${g.pick(components)} and is the first contact when ${g.pick(projects)} alerts fire in ${g.pick(tools)}.`,
  (g) => `The ${g.pick(projects)} service handles ${g.int(10, 9000)} requests per second at peak, mostly from ${g.pick(places)}.`,
  (g) => `Lesson: restarting ${g.pick(tools)} during ${g.pick(activities)} on ${g.pick(projects)} caused ${g.int(2, 60)} minutes of downtime.`,
];

/** The i-th synthetic memory text of a corpus: deterministic in (seed, i). */
export function syntheticMemory(i: number, seed = 1): string {
  const g = gen(prng(seed * 1_000_003 + i));
  return g.pick(templates)(g);
}

const queryTemplates: Array<(g: Gen) => string> = [
  (g) => `What does ${g.pick(people)} prefer for ${g.pick(activities)}?`,
  (g) => `Which database does the ${g.pick(projects)} ${g.pick(components)} use?`,
  (g) => `Where did ${g.pick(people)} move to?`,
  (g) => `Who is the tech lead of the ${g.pick(projects)} team?`,
  (g) => `error ${code(g)} ${g.pick(projects)} deploy`,
  (g) => `How should I contact ${g.pick(people)} about ${g.pick(projects)}?`,
  (g) => `When is ${g.pick(people)} on vacation in ${g.pick(places)}?`,
  (g) => `Which version of ${g.pick(tools)} works with ${g.pick(projects)}?`,
  (g) => `How much does ${g.pick(companies)} pay for ${g.pick(projects)}?`,
  (g) => `${g.pick(projects)} incident HTTP ${g.pick(statuses)} ${g.pick(components)}`,
  (g) => `Does ${g.pick(people)} like ${g.pick(preferences)}?`,
  (g) => `Who owns the ${g.pick(components)} of ${g.pick(projects)}?`,
  (g) => `when does the ${g.pick(projects)} on-call rotation switch`,
  (g) => `migration of ${g.pick(projects)} from ${g.pick(tools)}`,
  (g) => `What is ${g.pick(people)}'s favourite food?`,
  (g) => `downtime caused by restarting ${g.pick(tools)}`,
];

/**
 * Distinct queries, deterministic in (seed, count): every text differs, so a run that uses each once
 * pays the query embedding every time (the server caches embeddings by exact text).
 */
export function syntheticQueries(count: number, seed = 7): string[] {
  const random = prng(seed);
  const g = gen(random);
  const seen = new Set<string>();
  const out: string[] = [];
  for (let attempts = 0; out.length < count && attempts < count * 50; attempts++) {
    const q = g.pick(queryTemplates)(g);
    if (!seen.has(q)) {
      seen.add(q);
      out.push(q);
    }
  }
  if (out.length < count) throw new Error(`only ${out.length} distinct queries could be generated`);
  return out;
}
