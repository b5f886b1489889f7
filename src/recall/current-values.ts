import { asksAbout, factsOf, queryAttributes } from "../memories/contradictions/facts.js";
import type { ScoredCandidate } from "./recall-engine.js";

// Recall that answers with what is true now. A question that asks for an attribute ("where does the user
// live?", "which editor…") lifts the candidates that state that attribute of the entity asked about; and
// of two active memories that state one single-valued attribute of one entity with no update recorded
// between them, the newer never ranks below the older: their scores are dealt out again, the higher ones
// to the newer memories, so no other candidate moves.

/** How much a candidate that states the attribute asked about gains, relative to its score. */
export const askedAttributeBoost = 1;
/** Candidates read for facts, best first: enough for any limit, few enough to stay cheap (texts are cached). */
const factCandidates = 50;

export function preferCurrentValues(candidates: ScoredCandidate[], query: string): void {
  if (candidates.length < 1) return;
  const asked = queryAttributes(query);
  const top = [...candidates].sort((a, b) => b.finalScore - a.finalScore).slice(0, factCandidates);
  const groups = new Map<string, Set<ScoredCandidate>>();
  for (const c of top) {
    if (c.memory.state !== "active") continue;
    const facts = factsOf(c.memory.content);
    if (facts.some((f) => asked.attributes.has(f.attribute) && asksAbout(asked, f))) c.finalScore *= 1 + askedAttributeBoost;
    for (const f of facts) {
      if (!f.single) continue;
      const key = `${f.entity}\u0000${f.attribute}`;
      const group = groups.get(key) ?? groups.set(key, new Set()).get(key)!;
      group.add(c);
    }
  }
  for (const group of groups.values()) {
    if (group.size < 2) continue;
    const members = [...group];
    const scores = members.map((c) => c.finalScore).sort((a, b) => b - a);
    members.sort((a, b) => b.memory.validFrom.getTime() - a.memory.validFrom.getTime() || b.memory.createdAt.getTime() - a.memory.createdAt.getTime());
    members.forEach((c, i) => (c.finalScore = scores[i]!));
  }
}
