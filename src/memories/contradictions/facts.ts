import { ByteLru, entryOverheadBytes, stringBytes } from "../../embeddings/lru.js";
import { readText } from "./frames.js";
import { wordsOf } from "./nlp.js";
import { nounAttributes, valueAttributes, verbAttributes, type AttributeId } from "./taxonomy.js";

// What a memory states, as (entity, attribute) pairs from its frames, and which attributes a question
// asks about, from the same taxonomy: recall uses both to put the current value of what was asked first.

export interface Fact {
  /** Normalised entity key ("user", "harbor"). */
  entity: string;
  attribute: AttributeId;
  single: boolean;
}

const personWords = new Set(["user", "she", "he", "her", "his", "him", "they", "them", "their", "i", "me", "my"]);
const factCache = new ByteLru<string, Fact[]>(4 * 1024 * 1024, (text, facts) => stringBytes(text) + entryOverheadBytes + 64 * facts.length);

/** The facts a memory's text states (cached by text: a memory's facts never change with its version). */
export function factsOf(text: string): Fact[] {
  const cached = factCache.get(text);
  if (cached) return cached;
  const facts: Fact[] = [];
  const { frames } = readText(text);
  for (const frame of frames) {
    if (!frame.attribute || frame.tentative || frame.past) continue;
    const id = frame.attribute.id as AttributeId;
    facts.push({ entity: frame.entity, attribute: id, single: frame.attribute.single });
    // "joined Tessellate Health as a staff data engineer": an employer and a role.
    if (id === "employer" && frame.qualifier !== "") facts.push({ entity: frame.entity, attribute: "role", single: true });
  }
  // "… but still no meat (pescatarian)": a value that names its attribute anywhere in the text.
  const entity = frames[0]?.entity;
  if (entity) {
    for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
      const id = valueAttributes.get(word);
      if (id && !facts.some((f) => f.attribute === id)) facts.push({ entity, attribute: id, single: true });
    }
  }
  factCache.set(text, facts);
  return facts;
}

export interface QueryAttributes {
  attributes: Set<AttributeId>;
  /** The query's words (lower case and lemmas), to tell which entity it asks about. */
  words: Set<string>;
  /** It names a person or a thing of its own (not only "the user" or a pronoun). */
  namesEntity: boolean;
}

/** The attributes a question asks about: "where does the user live now?" → residence. */
export function queryAttributes(query: string): QueryAttributes {
  const words = wordsOf(query.slice(0, 500));
  const attributes = new Set<AttributeId>();
  const lemmas = words.map((w) => w.lemma);
  for (let i = 0; i < words.length; i++) {
    for (let n = 3; n >= 1; n--) {
      const gram = lemmas.slice(i, i + n).join(" ");
      const id = nounAttributes.get(gram) ?? valueAttributes.get(gram);
      if (id && (n > 1 || words[i]!.pos !== "VERB")) attributes.add(id);
    }
    const w = words[i]!;
    if (w.pos === "VERB" || w.pos === "NOUN") {
      const id = verbAttributes.get(`${w.lemma} ${words[i + 1]?.lower ?? ""}`) ?? verbAttributes.get(w.lemma) ?? (w.lemma === "live" ? "residence" : undefined);
      if (id) attributes.add(id);
    }
  }
  // Its words as written and as lemmas, to find an entity's words in ("the Harbor standup").
  const all = new Set([...words.map((w) => w.lower), ...lemmas]);
  const namesEntity = words.some((w) => w.pos === "PROPN" && !personWords.has(w.lower));
  return { attributes, words: all, namesEntity };
}

/** Whether a fact's entity is the one a question asks about: its words are the question's, or it is the user. */
export function asksAbout(query: QueryAttributes, fact: Fact): boolean {
  const tokens = fact.entity.split(" ").filter((t) => t !== "");
  if (tokens.length === 0) return false;
  // Every word of a short entity ("the user's sister" is not "the user"), most of a long one ("the
  // Harbor team standup" for "the Harbor standup").
  const named = tokens.filter((t) => query.words.has(t)).length;
  if (named === tokens.length || (tokens.length >= 3 && named * 3 >= tokens.length * 2)) return true;
  return !query.namesEntity && personWords.has(fact.entity);
}
