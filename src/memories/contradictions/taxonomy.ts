// What agents store about people, teams and systems, as attributes: each one's name, whether it holds one
// value at a time, and the phrasings that name it. Two statements meet on an attribute however each is
// phrased ("lives in" ↔ "moved to" ↔ "is based in"; "manager is" ↔ "reports to"). Keys of `verbs` are
// lemmas, with the preposition that follows when it matters; keys of `nouns` are what a possessive or an
// "as …" names ("the user's mobile number", "as their main editor").

export interface Attribute {
  id: string;
  /** For reasons: "residence of the user: Berlin → Munich". */
  label: string;
  /** A new value replaces the old one (a residence); otherwise values add up (languages spoken). */
  single: boolean;
  /**
   * Its values can be of many kinds ("prefers dark mode", "prefers short answers"): two values replace
   * each other only when they are of one kind (by the embedder's similarity).
   */
  broad?: true;
}

const attributes = {
  residence: { label: "residence", single: true },
  address: { label: "address", single: true },
  employer: { label: "employer", single: true },
  role: { label: "role", single: true },
  team: { label: "team", single: true },
  manager: { label: "manager", single: true },
  email: { label: "email address", single: true },
  phone: { label: "phone number", single: true },
  handle: { label: "handle", single: true },
  relationship: { label: "relationship status", single: true },
  partner: { label: "partner", single: true },
  diet: { label: "diet", single: true },
  editor: { label: "editor", single: true },
  laptop: { label: "laptop", single: true },
  phoneModel: { label: "phone model", single: true },
  car: { label: "car", single: true },
  version: { label: "version", single: true },
  region: { label: "region", single: true },
  hosting: { label: "hosting", single: true },
  database: { label: "database", single: true },
  ci: { label: "CI", single: true },
  schedule: { label: "time", single: true },
  quantity: { label: "amount", single: true },
  price: { label: "price", single: true },
  plan: { label: "plan", single: true },
  timezone: { label: "time zone", single: true },
  channel: { label: "channel", single: true },
  name: { label: "name", single: true },
  preference: { label: "preference", single: true, broad: true },
  drink: { label: "drink", single: true },
  language: { label: "languages", single: false },
  codeLanguage: { label: "programming language", single: true },
  likes: { label: "likes", single: false, broad: true },
  tools: { label: "tools", single: false, broad: true },
  owns: { label: "possessions", single: false, broad: true },
  hobby: { label: "hobbies", single: false, broad: true },
} as const satisfies Record<string, Omit<Attribute, "id">>;

export type AttributeId = keyof typeof attributes;

export function attribute(id: AttributeId): Attribute {
  return { id, ...attributes[id] };
}

/** Verbs (lemma, or "lemma preposition") that name an attribute of their subject. */
export const verbAttributes = new Map<string, AttributeId>([
  ["live in", "residence"], ["live at", "residence"], ["reside in", "residence"], ["base in", "residence"],
  ["locate in", "residence"], ["locate at", "address"], ["relocate to", "residence"], ["settle in", "residence"], ["move back to", "residence"],
  ["work at", "employer"], ["work for", "employer"], ["join", "employer"], ["employ by", "employer"], ["hire by", "employer"],
  ["work as", "role"], ["promote to", "role"], ["serve as", "role"],
  ["report to", "manager"], ["manage by", "manager"], ["work under", "manager"], ["lead by", "manager"], ["run by", "manager"],
  ["own by", "manager"], ["head by", "manager"],
  ["marry", "partner"], ["date", "partner"],
  ["speak", "language"], ["learn", "language"],
  ["like", "likes"], ["love", "likes"], ["enjoy", "likes"], ["adore", "likes"],
  ["prefer", "preference"],
  ["drink", "drink"],
  ["run in", "region"], ["host in", "region"],
  ["host on", "hosting"], ["host at", "hosting"], ["host by", "hosting"],
  ["cost", "price"], ["charge", "price"],
  ["own", "owns"], ["have", "owns"], ["drive", "car"],
  ["play", "hobby"], ["practise", "hobby"], ["practice", "hobby"],
  ["use", "tools"], ["store in", "database"],
  ["write in", "codeLanguage"], ["rewrite in", "codeLanguage"], ["port to", "codeLanguage"], ["implement in", "codeLanguage"],
  ["call", "name"], ["name", "name"], ["go by", "name"], ["rename to", "name"],
  ["happen on", "schedule"], ["happen at", "schedule"], ["take place on", "schedule"], ["take place at", "schedule"],
  ["meet on", "schedule"], ["meet at", "schedule"], ["start at", "schedule"],
  ["go out on", "schedule"], ["ship on", "schedule"], ["occur on", "schedule"],
]);

/** Verbs whose object is the thing described and whose subject its value: "Priya leads the payments team". */
export const leaderVerbs = new Set(["lead", "head", "run", "manage", "own", "take over", "chair"]);

/**
 * Verbs of change that set a value without naming the attribute ("switched to VS Code", "was raised to
 * 250"): the attribute is the older statement's, when the values are of one kind.
 */
export const setterVerbs = new Set([
  "switch", "change", "migrate", "move", "upgrade", "downgrade", "raise", "lower", "increase", "decrease", "cut", "reduce",
  "set", "update", "bump", "shift", "transfer", "push", "reschedule", "postpone", "extend", "replace", "swap", "convert",
  "become", "turn", "adjust", "drop", "rename", "relocate",
]);

/** Verbs whose object is a value that is gone: "sold the Golf", "quit coffee", "turned off email alerts". */
export const removalVerbs = new Set(["sell", "quit", "leave", "drop", "cancel", "stop", "disable", "remove", "retire", "ditch", "abandon", "give up", "turn off"]);

/** Nouns that name an attribute (after a possessive, or in "as …"). Multi-word keys first when matching. */
export const nounAttributes = new Map<string, AttributeId>([
  ["home", "residence"], ["city", "residence"], ["hometown", "residence"], ["address", "address"], ["home address", "address"],
  ["employer", "employer"], ["company", "employer"],
  ["role", "role"], ["title", "role"], ["job title", "role"], ["position", "role"], ["job", "role"],
  ["team", "team"],
  ["manager", "manager"], ["boss", "manager"], ["line manager", "manager"], ["supervisor", "manager"], ["lead", "manager"],
  ["team lead", "manager"], ["leader", "manager"], ["head", "manager"], ["owner", "manager"],
  ["email", "email"], ["email address", "email"], ["e-mail", "email"],
  ["phone", "phone"], ["phone number", "phone"], ["mobile", "phone"], ["mobile number", "phone"], ["number", "phone"], ["cell", "phone"],
  ["handle", "handle"], ["username", "handle"],
  ["partner", "partner"], ["wife", "partner"], ["husband", "partner"], ["girlfriend", "partner"], ["boyfriend", "partner"], ["spouse", "partner"],
  ["relationship status", "relationship"], ["diet", "diet"],
  ["editor", "editor"], ["ide", "editor"], ["code editor", "editor"], ["main editor", "editor"], ["text editor", "editor"],
  ["laptop", "laptop"], ["computer", "laptop"], ["machine", "laptop"],
  ["phone model", "phoneModel"], ["car", "car"], ["vehicle", "car"],
  ["version", "version"], ["release", "version"], ["current release", "version"], ["current version", "version"],
  ["region", "region"], ["data center", "region"], ["datacenter", "region"],
  ["host", "hosting"], ["hosting", "hosting"], ["hosting provider", "hosting"], ["cloud", "hosting"], ["cloud provider", "hosting"],
  ["database", "database"], ["db", "database"], ["datastore", "database"],
  ["ci", "ci"], ["ci system", "ci"], ["ci provider", "ci"],
  ["time", "schedule"], ["schedule", "schedule"],
  ["limit", "quantity"], ["rate limit", "quantity"], ["budget", "quantity"], ["quota", "quantity"], ["size", "quantity"],
  ["price", "price"], ["cost", "price"], ["fee", "price"], ["rate", "price"],
  ["plan", "plan"], ["subscription", "plan"], ["tier", "plan"], ["support", "plan"], ["support plan", "plan"], ["support tier", "plan"],
  ["time zone", "timezone"], ["timezone", "timezone"],
  ["channel", "channel"], ["preferred channel", "channel"],
  ["name", "name"], ["favourite", "preference"], ["favorite", "preference"],
  ["language", "language"], ["drink", "drink"],
]);

/** Values that name their attribute themselves: "the user is vegetarian", "the user is married". */
export const valueAttributes = new Map<string, AttributeId>([
  ["vegetarian", "diet"], ["vegan", "diet"], ["pescatarian", "diet"], ["omnivore", "diet"], ["carnivore", "diet"], ["keto", "diet"],
  ["flexitarian", "diet"],
  ["single", "relationship"], ["married", "relationship"], ["engaged", "relationship"], ["divorced", "relationship"],
  ["widowed", "relationship"], ["separated", "relationship"],
]);

/** Values that say a statement's subject is a person, for "moved to <place>" as a residence. */
export const personSubjects = new Set(["user", "i", "me", "she", "he", "they", "we"]);

/** Words after which a value ends: what follows qualifies it. */
export const valueStops = new Set(["because", "so", "which", "who", "where", "when", "while", "since", "after", "before", "until", "but", "and", "or", "to", "than", "like"]);

/** Markers of a statement that adds to what is known. */
export const additionWords = new Set(["also", "too", "additionally", "besides", "another", "extra", "second", "other"]);
export const additionPhrases = ["as well", "in addition", "on top of that", "on top of"];

/** Markers of a statement that replaces what was. */
export const changeWords = new Set(["now", "nowadays", "anymore"]);
export const changePhrases = ["these days", "from now on", "no longer", "as of", "going forward", "any more", "not anymore"];

/** Markers of a plan or a possibility, not a change. */
/** Verbs (lemmas) of a plan, not a change: "is considering", "plans to", "is trialing". */
export const tentativeLemmas = new Set(["plan", "consider", "evaluate", "think", "hope", "propose", "intend", "aim", "explore", "discuss", "debate", "try", "trial", "test"]);
export const tentativeWords = new Set(["may", "might", "could", "would", "will", "shall", "'ll", "’ll", "wo", "gonna", "plan", "consider", "evaluate", "think", "hope", "propose", "maybe", "perhaps", "if"]);

/** Words of a time phrase that says when something changed ("last month", "since Monday"), not a value. */
export const changeTimeWords = new Set([
  "last", "ago", "since", "yesterday", "today", "tonight", "recently", "earlier", "later", "this", "next", "week", "month", "year",
  "spring", "summer", "autumn", "fall", "winter", "weekend", "morning", "january", "february", "march", "april", "may", "june",
  "july", "august", "september", "october", "november", "december",
]);

export const weekdayNames = new Set(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday", "weekday", "weekend"]);

/** Words that end a value that names a group rather than a place: "moved to the platform team". */
export const groupWords = new Set(["team", "squad", "group", "department", "org", "organisation", "organization", "unit", "division"]);

/** Period words after a number: "3.99 euros a month" and "29 euros a year" are two attributes. */
export const periodWords = new Set(["second", "minute", "hour", "day", "week", "month", "year", "annually", "monthly", "weekly", "daily", "yearly", "hourly"]);

/** What a diet rules out: "is vegetarian" → "eats meat again" is a change of diet. */
export const dietExcludes = new Map<string, string[]>([
  ["vegetarian", ["meat", "fish", "chicken", "beef", "pork", "lamb", "seafood", "bacon", "steak", "ham"]],
  ["vegan", ["meat", "fish", "chicken", "beef", "pork", "lamb", "seafood", "dairy", "cheese", "egg", "milk", "honey", "butter", "bacon", "steak", "ham"]],
  ["pescatarian", ["meat", "chicken", "beef", "pork", "lamb", "bacon", "steak", "ham"]],
]);

/** Every verb the taxonomy knows, for a verb the tagger read as a noun ("Lumen stores its data …"). */
export const knownVerbs = new Set([
  ...[...verbAttributes.keys()].map((k) => k.split(" ")[0]!),
  ...leaderVerbs,
  ...setterVerbs,
  ...removalVerbs,
]);

/** Values whose kind is common knowledge: the editor, database, CI, cloud or programming language an agent's user works with. */
export const valueClasses = new Map<string, AttributeId>([
  ...["vim", "neovim", "nvim", "emacs", "vs code", "vscode", "helix", "sublime", "intellij", "pycharm", "webstorm", "zed", "cursor", "xcode", "nano", "lazyvim"].map(
    (v) => [v, "editor"] as const,
  ),
  ...["postgres", "postgresql", "mysql", "mariadb", "sqlite", "mongodb", "dynamodb", "firestore", "firebase", "supabase", "spanner", "cockroachdb", "cassandra", "redis", "oracle", "aurora", "bigquery", "snowflake", "clickhouse"].map(
    (v) => [v, "database"] as const,
  ),
  ...["jenkins", "github actions", "circleci", "travis", "buildkite", "gitlab ci", "teamcity", "drone", "bamboo"].map((v) => [v, "ci"] as const),
  ...["python", "go", "golang", "rust", "java", "kotlin", "typescript", "javascript", "ruby", "elixir", "scala", "c#", "c++", "swift", "php", "haskell", "clojure", "node.js", "nodejs"].map(
    (v) => [v, "codeLanguage"] as const,
  ),
  ...["aws", "gcp", "azure", "google cloud", "heroku", "vercel", "netlify", "fly.io", "digitalocean", "hetzner", "cloudflare"].map((v) => [v, "hosting"] as const),
]);

/** Verbs (lemmas) that announce a change of what holds, when they are a statement's main verb. */
export const changeVerbs = new Set([
  ...setterVerbs,
  ...removalVerbs,
  "take", "pass", "hand", "slip", "delay", "sell", "promote", "demote", "shorten", "lengthen", "halve", "double", "phase", "give",
  "close", "reopen", "resolve", "suspend", "deprecate", "archive", "sunset", "terminate", "revoke", "rewrite", "relocate",
]);
