import type { Frame } from "./frames.js";
import { genericTopics, qualifiersClash, relationWords, type Gist } from "./gist.js";
import { attribute, dietExcludes, periodWords } from "./taxonomy.js";
import { onlyValueOf, type ValueForm } from "./typed-values.js";

// Whether a newer statement updates an older one, read from their frames (see frames.ts): the same entity,
// the same single-valued attribute and another value; or a change that names the old value. An addition,
// another entity, a many-valued attribute, a plan or a past state is not an update: such a pair is kept
// beside, with why. A pair the frames cannot settle (the same entity, an attribute outside the taxonomy,
// another value) is doubtful: the judge, when configured, decides it.

export type FrameRule = "attribute" | "change" | "removal" | "topic" | "negation";

export type FrameAssessment =
  | { kind: "update"; rule: FrameRule; reason: string; score: number }
  | { kind: "kept"; reason: string; /** Only "more detail": a change that names the old value overrides it. */ detail?: true }
  | { kind: "doubtful"; reason: string };

/**
 * Sentence similarity (the embedder's cosine) above which two values of one predicate outside the
 * taxonomy are of one kind ("prefers tea" / "prefers coffee", not "prefers dark mode" / "prefers short answers").
 */
export const sameKindSimilarity = 0.7;

/** Words that join an entity's parts: "the TLS certificate for api.example.com" is "the api.example.com TLS certificate". */
const entityJoiners = new Set(["for", "of", "on", "at", "in"]);
const entityWords = (e: string) => e.split(" ").filter((t) => !entityJoiners.has(t)).sort().join(" ");
/** One entity written in either order: "TLS certificate for api.example.com" / "api.example.com TLS certificate". */
export const sameEntity = (a: string, b: string): boolean => a === b || (a.includes(" ") && entityWords(a) === entityWords(b));

const continents = new Set(["europe", "asia", "africa", "america", "oceania", "antarctica", "emea", "apac", "latam"]);
const isContinent = (value: readonly string[]) => value.length <= 2 && value.some((t) => continents.has(t));

const overlaps = (a: readonly string[], b: readonly string[]) => a.some((t) => b.includes(t));
const sameTokens = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((t) => b.includes(t));
/** One value holds the other: "Rotterdam" / "Rotterdam near Kralingse Plas" adds detail. */
const contains = (a: readonly string[], b: readonly string[]) => b.length > 0 && b.every((t) => a.includes(t));
const isNumber = (t: string) => /\d/.test(t);
const quote = (s: string) => (s.length > 60 ? `${s.slice(0, 57)}…` : s);

/**
 * How `newer` bears on `older`, or null when they are about different things. `conversation`: either text
 * reads as a line of conversation, where only attributes the taxonomy names are trusted.
 */
export function assessFrames(older: Frame, newer: Frame, similarity: number, conversation = false): FrameAssessment | null {
  if (older.entity === "" || !sameEntity(older.entity, newer.entity)) {
    // Entities that share words ("builds for the billing service" / "billing service CI") may be one
    // thing phrased twice: the topic decides. Entities that share none are two.
    const a = older.entity.split(" ");
    const b = newer.entity.split(" ");
    const extra = [...a.filter((t) => !b.includes(t)), ...b.filter((t) => !a.includes(t))];
    const shareWords = a.some((t) => t !== "" && b.includes(t)) && !extra.some((t) => relationWords.has(t));
    if (older.attribute && newer.attribute && older.attribute.id === newer.attribute.id && older.attribute.single && !shareWords && older.entity !== "") {
      return { kind: "kept", reason: `another subject: ${older.attribute.label} of ${newer.entityText}, not of ${older.entityText}` };
    }
    return null;
  }
  const known = (older.attribute ?? newer.attribute)?.label;
  // "residence of the user"; outside the taxonomy the entity and its predicate: "Maya's school day, end at".
  const subject = known ? `${known} of ${older.entityText}` : older.predicate === "be" ? `value of ${older.entityText}` : `${older.entityText}, ${older.predicate.replace(/^\w+:/, "")}`;
  if (newer.tentative) return { kind: "kept", reason: `a plan, not a change (${subject})` };
  if (older.tentative) return null;
  if (older.past || newer.past) return { kind: "kept", reason: `a past state, not a change (${subject})` };
  if (older.negative !== newer.negative) {
    // "is allergic to penicillin" → "is no longer considered allergic to penicillin": one value of one
    // predicate (or attribute), its polarity flipped.
    // In conversation, only an attribute the taxonomy names ("No problem! Let me know …" is no negation).
    const sameAttributeNamed = older.attribute !== null && older.attribute.id === newer.attribute?.id;
    const samePredicate = sameAttributeNamed || (!conversation && (older.predicate === newer.predicate || older.predicate === "be"));
    const same =
      samePredicate && older.value.length > 0 && newer.value.length > 0 && (contains(newer.value, older.value) || contains(older.value, newer.value));
    return same ? update("negation", `${subject}: ${newer.negative ? "no longer" : "now"} ${quote(older.valueText)}`) : null;
  }
  if (older.negative) return null;

  const a = older.attribute;
  const b = newer.attribute;
  const sameAttribute = a && b ? a.id === b.id : false;
  // "is vegetarian" → "eats meat again": what the diet rules out.
  if (a?.id === "diet" && newer.predicate === "verb:eat" && older.value.some((d) => dietExcludes.get(d)?.some((food) => newer.value.includes(food)))) {
    return update("attribute", `diet of ${older.entityText}: ${older.valueText} → eats ${newer.valueText}`);
  }
  // A change that names the old value: "from Fridays to Tuesdays", "replaced Jenkins with …", "sold the Golf".
  const mayName = newer.setter || sameAttribute || a === null || b === null;
  if (mayName && newer.old && newer.old.length > 0 && overlaps(newer.old, older.value)) {
    if (!sameTokens(newer.value, older.value) && newer.value.length > 0) {
      return update("change", `${subject}: ${older.valueText} → ${newer.valueText} (${newer.change ?? "changed"} from ${newer.oldText})`);
    }
  }
  if (mayName && newer.removes && newer.value.length > 0 && overlaps(newer.value, older.value) && !older.removes) {
    return update("removal", `${subject}: ${older.valueText} is gone (${newer.change ?? "removed"} ${newer.valueText})`);
  }

  const setterMeets = !sameAttribute && newer.setter && (b === null || a === null || a.id === b.id);
  const samePredicate = !a && !b && older.predicate === newer.predicate;
  if (!sameAttribute && !setterMeets && !samePredicate) return null;
  if (newer.addition) return { kind: "kept", reason: `an addition ("${newer.addition}"): ${subject}` };
  if (older.scope !== newer.scope && (older.scope !== "" || newer.scope !== "")) {
    return { kind: "kept", reason: `another scope: ${subject} for ${newer.scopeText || "everything"}, not for ${older.scopeText || "everything"}` };
  }
  const attr = a ?? b;
  if (attr && !attr.single && !newer.change && !newer.setter) return { kind: "kept", reason: `${attr.label} can hold several values: ${subject}` };
  // "meetings in the morning" → "… in the afternoon" changes when; "coffee every morning" and "tea in the
  // afternoon" are two habits.
  if (older.when !== "" && newer.when !== "" && older.when !== newer.when) {
    if (sameTokens(older.value, newer.value)) return update("attribute", `${subject}: ${older.when} → ${newer.when}`);
    return { kind: "kept", reason: `another time of day: ${subject} in the ${newer.when}, not the ${older.when}` };
  }
  if (newer.value.length === 0 || older.value.length === 0 || sameTokens(older.value, newer.value)) return null;
  // The same change told of two things ("cancelled a reservation at Nopa" / "… at Zuni"): two events.
  if (samePredicate && older.change !== null && older.change.toLowerCase() === newer.change?.toLowerCase()) return null;
  if (contains(newer.value, older.value) || contains(older.value, newer.value)) return { kind: "kept", reason: `more detail, same value: ${subject}`, detail: true };
  // "3.99 euros a month" / "29 euros a year": numbers per another period are another attribute.
  const periods = (v: readonly string[]) => v.filter((t) => periodWords.has(t)).join(" ");
  if (periods(older.value) !== periods(newer.value)) return { kind: "kept", reason: `another period: ${subject}` };
  const change = `${subject}: ${quote(older.valueText)} → ${quote(newer.valueText)}${newer.change ? ` (${newer.change})` : ""}`;
  if (older.value.length > maxValueTokens || newer.value.length > maxValueTokens) return { kind: "doubtful", reason: change };
  // "is in Europe" / "is based in Warsaw": a continent and a place may be one place at two scales.
  if (isContinent(older.value) !== isContinent(newer.value)) return { kind: "doubtful", reason: `${change} (a continent and a place within it?)` };
  // Two values are of one kind when both are times, or numbers of one unit, or one name's versions
  // ("PostgreSQL 14" / "PostgreSQL 16"); otherwise by the embedder's similarity of the two statements.
  const words = (v: readonly string[]) => v.filter((t) => !isNumber(t));
  const oneKind =
    older.valueKind === newer.valueKind &&
    (older.valueKind === "time" ||
      (older.valueKind === "number" && sameTokens(words(older.value), words(newer.value))) ||
      (overlaps(words(older.value), words(newer.value)) && older.value.some(isNumber) && newer.value.some(isNumber)));
  const similar = similarity >= sameKindSimilarity;
  if (sameAttribute && attr!.single && (!attr!.broad || oneKind || similar)) return update("attribute", change);
  // The setter's attribute is the older statement's; a predicate outside the taxonomy needs a change marker.
  if (!conversation && (setterMeets || (samePredicate && newer.change)) && (oneKind || similar)) return update("attribute", change);
  // One predicate of one entity named in two words or more, another time or number of the same unit
  // ("Maya's school day ends at 3:15 pm" / "… at 3:30 pm").
  const named = older.entity.split(" ").length >= 2;
  if (!conversation && samePredicate && oneKind && named && (older.valueKind === "time" || older.valueKind === "number")) return update("attribute", change);
  return { kind: "doubtful", reason: change };
}

function update(rule: FrameRule, reason: string): FrameAssessment {
  return { kind: "update", rule, reason, score: rule === "attribute" ? 0.8 : 0.85 };
}

/** The strongest assessment over every pair of clauses: an update first, then a near miss, then a doubt. */
export function assessStatements(older: readonly Frame[], newer: readonly Frame[], similarity: number, conversation = false): FrameAssessment | null {
  let best: FrameAssessment | null = null;
  const rank = { update: 3, kept: 2, doubtful: 1 } as const;
  for (const n of newer) {
    for (const o of older) {
      const a = assessFrames(o, n, similarity, conversation);
      if (a && (!best || rank[a.kind] > rank[best.kind])) best = a;
      if (best?.kind === "update") return best;
    }
  }
  return best;
}

/**
 * Similarity above which a statement that announces a change replaces an older one on its topic. Both
 * come from the candidates' search, which already holds the nearest memories only.
 */
export const topicChangeSimilarity = 0.5;
/** The same, when the two share only a name (a person's: "Chloe is on the Search team" / "Chloe moved to Payments"). */
export const namesOnlySimilarity = 0.55;
/** A value longer than this is a clause the frames did not read, not a value. */
const maxValueTokens = 6;

/**
 * A change announced on the older statement's topic: "Billing service CI migrated from Jenkins to GitHub
 * Actions" after "Builds for the billing service run on Jenkins". Both must share a name or a noun
 * beyond generic ones, be alike, and nothing may mark a look-alike: another relative or qualifier, an
 * addition, a plan, a past state.
 */
export function assessGist(older: Gist, newer: Gist, similarity: number): FrameAssessment | null {
  // "has a new mobile number" changes the older statement's mobile number.
  const renewed = [...newer.renewed].find((t) => older.topic.has(t));
  const change = newer.change ?? (renewed ? `new ${renewed}` : null);
  if (!change || newer.addition || newer.tentative || newer.past || older.tentative || newer.conversational || older.conversational) return null;
  // The same change told twice ("quit smoking in 2019" / "… five years ago") is no new one.
  if (newer.changeKey !== null && older.changeKey === newer.changeKey) return null;
  const shared = [...older.topic].filter((t) => newer.topic.has(t));
  // The change must act on the older statement's topic: not "switched the theme to dark mode in VS Code".
  if (shared.length === 0 || ![...newer.changed].some((t) => older.topic.has(t))) return null;
  // Two subjects of their own, neither named by the other ("the ML pipeline" / "the analytics notebooks").
  const named = (subject: ReadonlySet<string>, other: Gist) => [...subject].some((t) => other.topic.has(t));
  if (older.subject.size > 0 && newer.subject.size > 0 && !named(older.subject, newer) && !named(newer.subject, older)) return null;
  // Another identifier as the subject ("the API v3 endpoint" / "the API v2 endpoint"): another thing.
  const otherIds = [...newer.identifiers].filter((t) => newer.subject.has(t) && !older.identifiers.has(t));
  if (otherIds.length > 0 && [...older.identifiers].some((t) => older.subject.has(t) && !newer.identifiers.has(t))) {
    return { kind: "kept", reason: `another one: ${otherIds.join(", ")}, not ${[...older.identifiers].join(", ")}` };
  }
  const sameSet = (a: ReadonlySet<string>, b: ReadonlySet<string>) => a.size === b.size && [...a].every((x) => b.has(x));
  if (!sameSet(older.relations, newer.relations)) return { kind: "kept", reason: `another person: ${[...newer.relations].join(", ") || "the user"}, not ${[...older.relations].join(", ") || "the user"}` };
  if (qualifiersClash(older.qualifiers, newer.qualifiers)) return { kind: "kept", reason: `another attribute: ${[...newer.qualifiers].join(", ")}, not ${[...older.qualifiers].join(", ")}` };
  const added = [...newer.topic].filter((t) => !older.topic.has(t));
  const reason = `${shared.slice(0, 3).join(", ")} changed ("${change}")${added.length > 0 ? `: now ${added.slice(0, 3).join(", ")}` : ""}`;
  // Another amount of one unit ("ninety days" → "reduced to 30 days") says the topic's value changed,
  // however unlike the two sentences read.
  const amount = [...newer.quantities].find(([unit, n]) => older.quantities.has(unit) && older.quantities.get(unit) !== n);
  if (amount) return { kind: "update", rule: "topic", reason: `${shared.slice(0, 3).join(", ")} changed ("${change}"): ${older.quantities.get(amount[0])} → ${amount[1]} ${amount[0]}`, score: 0.75 };
  // Only names in common and subjects with other heads ("Harbor on-call alerts" / "the Harbor team
  // standup"): two things of one project.
  const onlyNamesShared = shared.every((t) => older.names.has(t) && newer.names.has(t));
  if (onlyNamesShared && older.head !== null && newer.head !== null && older.head !== newer.head && !shared.includes(older.head) && !shared.includes(newer.head)) return null;
  // Only a person's name in common ("Mei's GitHub handle" / "Mei changed her Slack display name"): alike enough?
  const onlyNames = shared.every((t) => older.names.has(t) && newer.names.has(t));
  if (similarity < (onlyNames ? namesOnlySimilarity : topicChangeSimilarity)) return { kind: "doubtful", reason };
  return { kind: "update", rule: "topic", reason, score: 0.75 };
}

/**
 * A change that names the old value the older statement holds ("Wed 4:30 → Thu 5:00", "by Biome instead of
 * ESLint and Prettier"), on a topic the two share besides the values. Not an addition, a plan, a past
 * state or a line of conversation.
 */
export function assessNamedChange(older: Gist, newer: Gist): FrameAssessment | null {
  const named = newer.named;
  if (!named || newer.addition || newer.tentative || newer.past || newer.conversational || older.conversational || !sameRelations(older, newer)) return null;
  if (!named.old.every((k) => older.keys.has(k)) || named.value.every((k) => older.keys.has(k))) return null;
  const values = new Set([...named.old, ...named.value]);
  const context = [...newer.keys].filter((k) => older.keys.has(k) && !values.has(k) && k.length > 2 && !/\d/.test(k) && !genericTopics.has(k));
  if (context.length === 0) return null;
  const reason = `value of ${context.slice(0, 3).join(", ")}: ${quote(named.oldText)} → ${quote(named.valueText)} ("${named.marker}" names the old value)`;
  return { kind: "update", rule: "change", reason, score: 0.85 };
}

const valueForms: ValueForm[] = ["email", "phone", "street address", "web address"];

/**
 * Another value of one form (an email, a phone number, a street or web address) for the same person or
 * thing, in a statement that says a change ("changed to", "is now", "has a new …"). Not for another
 * relative, nor an addition, a plan, a past state or a line of conversation.
 */
export function assessTypedValue(older: Gist, newer: Gist): FrameAssessment | null {
  if (newer.values.length === 0 || older.values.length === 0) return null;
  const change = newer.change ?? (newer.renewed.size > 0 ? `new ${[...newer.renewed][0]}` : null);
  if (!change || newer.addition || newer.tentative || newer.past || newer.conversational || older.conversational) return null;
  const shared = [...older.topic].filter((t) => newer.topic.has(t) && !t.includes("@"));
  if (shared.length === 0 || !sameRelations(older, newer)) return null;
  for (const form of valueForms) {
    const was = onlyValueOf(older.values, form);
    const now = onlyValueOf(newer.values, form);
    if (!was || !now || was.key === now.key) continue;
    return { kind: "update", rule: "attribute", reason: `${form} of ${shared.slice(0, 2).join(", ")}: ${quote(was.text)} → ${quote(now.text)} ("${change}")`, score: 0.8 };
  }
  return null;
}

/**
 * A change to another value of a class the taxonomy knows ("migration to Google Cloud" after "everything we
 * run is on AWS"; "switched to Neovim" after "writes code in VS Code"): the older statement names one value
 * of that class, the newer one a change that leads to another. Not when both name subjects that share no
 * word, another person, nor an addition, a plan, a past state or a line of conversation.
 */
export function assessClassChange(older: Gist, newer: Gist): FrameAssessment | null {
  if (older.classed.length === 0 || !newer.classed.some((c) => c.changedTo)) return null;
  if (newer.addition || newer.tentative || newer.past || newer.conversational || older.conversational) return null;
  if (older.subject.size > 0 && newer.subject.size > 0 && ![...older.subject].some((t) => newer.subject.has(t))) return null;
  if (!sameRelations(older, newer)) return null;
  for (const now of newer.classed) {
    if (!now.changedTo) continue;
    const was = older.classed.filter((c) => c.attribute === now.attribute);
    if (was.length !== 1 || was[0]!.value === now.value) continue;
    const label = attribute(now.attribute).label;
    const of = [...newer.subject].join(" ") || [...older.subject].join(" ") || older.head || newer.head || "the older memory's subject";
    return { kind: "update", rule: "change", reason: `${label} of ${of}: ${was[0]!.value} → ${now.value} (a change to another ${label})`, score: 0.85 };
  }
  return null;
}

/** Both speak of the same relatives, or of none: "the user's sister" is not the user. */
function sameRelations(older: Gist, newer: Gist): boolean {
  return older.relations.size === newer.relations.size && [...older.relations].every((r) => newer.relations.has(r));
}
