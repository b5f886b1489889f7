// One English analyser for keyword search, on both backends and in the explanation of a match.
//
// PostgreSQL's `english` text search configuration is the reference: it builds the memories' tsvector
// (searched with VECTOR_BACKEND=pgvector) and reports `keywordMatches` on either backend. LanceDB's
// full-text index is configured to agree with it: the same Snowball stemmer, the same stop words, no
// accent folding (PostgreSQL's configuration folds none).

/** PostgreSQL's `english.stop` (tsearch_data, the Snowball list), word for word. */
export const englishStopWords: readonly string[] = [
  "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself", "yourselves",
  "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself", "they", "them", "their",
  "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these", "those", "am", "is", "are",
  "was", "were", "be", "been", "being", "have", "has", "had", "having", "do", "does", "did", "doing", "a", "an",
  "the", "and", "but", "if", "or", "because", "as", "until", "while", "of", "at", "by", "for", "with", "about",
  "against", "between", "into", "through", "during", "before", "after", "above", "below", "to", "from", "up",
  "down", "in", "out", "on", "off", "over", "under", "again", "further", "then", "once", "here", "there", "when",
  "where", "why", "how", "all", "any", "both", "each", "few", "more", "most", "other", "some", "such", "no", "nor",
  "not", "only", "own", "same", "so", "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now",
];

/**
 * The Snowball stems of those stop words that are not stop words themselves ("does" → "doe"). LanceDB
 * stems a token before its stop-word filter sees it, so without these "does" scored BM25 while
 * PostgreSQL dropped it. Computed with PostgreSQL's snowball template without a stop list:
 * `ts_lexize(<snowball english dictionary>, word)`. The cost: the rare real word "doe" is a stop word too.
 */
const stemmedStopWords: readonly string[] = [
  "ourselv", "yourselv", "themselv", "doe", "becaus", "dure", "befor", "abov", "onc", "whi", "ani", "onli", "veri",
];

/**
 * LanceDB full-text index options for this analyser. `version` names the index, so a table indexed with
 * an earlier analyser is re-indexed when a node opens it.
 */
export const lanceAnalyser: {
  version: string;
  options: { language: string; stem: boolean; lowercase: boolean; removeStopWords: boolean; customStopWords: string[]; asciiFolding: boolean };
} = {
  version: "a2",
  options: {
    language: "English",
    stem: true,
    lowercase: true,
    removeStopWords: true,
    customStopWords: [...englishStopWords, ...stemmedStopWords],
    asciiFolding: false,
  },
};
