// Word lists for the offline contradiction rules. Small on purpose: each entry is there because a
// sentence about a person, a team or a system commonly turns on it.

/** Function words that carry no subject, attribute or value. Copulas are kept (as "be"): they mark a value slot. */
export const stopwords = new Set(
  (
    "a an the this that these those there here it its it's our we us you your i my me he she his her they their them " +
    "of in on at to for from by with about as into onto over under after before during until than then " +
    "and or but so if while when where which who whom whose what how do does did done doing has have had having " +
    "will would shall should can could may might must just very really quite some any each every all both " +
    "currently now still usually mostly mainly approximately about around roughly"
  ).split(" "),
);

export const copulas = new Set(["is", "are", "was", "were", "be", "been", "being", "am"]);

/** Words that make a statement negative. "stopped"/"quit" end a habit, which negates it the same way. */
export const negations = new Set(["not", "no", "never", "without", "none", "nobody", "nothing", "neither", "nor", "stopped", "quit", "longer"]);

/** Markers of a statement that adds to what is known rather than replacing it. */
export const additiveMarkers = ["also", "too", "as well", "in addition", "additionally", "another", "besides", "more", "other"];

/**
 * Opposites: each word's side within its group. A sentence's polarity flips once per negative-side word,
 * so "hates X" and "does not love X" agree, and "is not public" and "is private" agree.
 */
const antonymGroups: Array<[positive: string[], negative: string[]]> = [
  [["love", "like", "enjoy", "adore", "want"], ["hate", "dislike", "detest", "loathe"]],
  [["enabled", "enable", "on", "active", "activated"], ["disabled", "disable", "off", "inactive", "deactivated"]],
  [["public"], ["private"]],
  [["always"], ["never"]],
  [["accept", "allow", "allowed", "permit", "permitted"], ["reject", "deny", "denied", "forbid", "forbidden", "block", "blocked"]],
  [["dark"], ["light"]],
  [["verbose", "detailed", "long"], ["concise", "brief", "short", "terse"]],
  [["early_riser", "morning_person"], ["night_owl"]],
  [["open", "opened"], ["closed", "close"]],
  [["include", "included"], ["exclude", "excluded"]],
  [["required", "mandatory"], ["optional"]],
  [["true", "yes"], ["false"]],
  [["online"], ["offline"]],
  [["visible", "shown"], ["hidden"]],
  [["remote", "remotely"], ["onsite", "in-office"]],
  [["pass", "passes", "succeed", "succeeds"], ["fail", "fails"]],
];

export const polarityWords = new Map<string, { group: number; negative: boolean }>();
antonymGroups.forEach(([pos, neg], group) => {
  for (const w of pos) polarityWords.set(w, { group, negative: false });
  for (const w of neg) polarityWords.set(w, { group, negative: true });
});

/** Multi-word terms read as one token before anything else. */
export const phrases: Array<[RegExp, string]> = [
  [/\bearly risers?\b/g, "early_riser"],
  [/\bmorning persons?\b/g, "morning_person"],
  [/\bnight owls?\b/g, "night_owl"],
  [/\bno longer\b/g, "not"],
  // "switched to the Free plan" states the new value as "is" would ("is on the Free plan").
  [/\b(?:switched|changed|upgraded|downgraded) (?:over )?to\b/g, "is"],
  [/\bin the office\b/g, "in-office"],
  [/\bon site\b/g, "onsite"],
];

/** Verbs whose object can hold many values at once: a new value is an addition, not a change. */
export const multiValuedVerbs = new Set([
  "like", "love", "enjoy", "prefer", "speak", "play", "visit", "know", "own", "have", "has", "had", "read", "watch", "follow",
  "support", "contain", "attend", "drink", "eat", "collect", "study", "learn",
]);

/** Synonyms folded onto one word, so "is based in" and "lives in" name the same attribute. */
export const synonyms = new Map<string, string>([
  ["reside", "live"], ["base", "live"], ["locate", "live"], ["move", "live"], ["relocate", "live"],
  ["favorite", "favourite"], ["call", "name"],
  ["employ", "work"], ["job", "work"], ["home", "live"],
]);

/** Inflections the suffix stripper cannot reach ("goes" / "going", "uses" / "using"). */
export const irregularForms = new Map([
  ["goes", "go"], ["going", "go"], ["went", "go"], ["gone", "go"],
  ["using", "use"], ["used", "use"], ["uses", "use"],
  ["ran", "run"], ["running", "run"], ["runs", "run"],
]);

/** Past forms without "-ed", for telling what happened ("met Alice on Tuesday") from what is so. */
export const irregularPasts = new Set([
  "ran", "met", "had", "took", "went", "bought", "paid", "ate", "saw", "flew", "wrote", "made", "gave", "got", "sent",
  "won", "lost", "spent", "told", "said", "came", "did", "drove", "sold", "found", "broke", "caught", "chose",
  "fell", "forgot", "heard", "held", "kept", "led", "rode", "spoke", "taught", "threw", "woke", "wore", "built",
]);

/**
 * Events that settle a lasting state (a start, a move, a birth) or set a value (a deadline extended, a
 * limit raised, a ticket assigned): another time or value for one of them is a correction or an update,
 * not another occurrence.
 */
export const settlingVerbs = new Set([
  "born", "married", "divorced", "founded", "established", "graduated", "joined", "started", "began", "hired",
  "retired", "resigned", "quit", "left", "died", "moved", "relocated", "renamed", "launched", "released",
  "promoted", "appointed", "elected", "became", "switched", "migrated", "changed", "upgraded", "downgraded",
  "transferred", "extended", "postponed", "rescheduled", "delayed", "scheduled", "raised", "lowered",
  "increased", "decreased", "reduced", "set", "assigned", "reassigned", "updated",
]);

/** Abbreviations whose full stop does not end a sentence ("Dr. Keller": Keller is a name). */
export const abbreviations = new Set(["dr", "mr", "mrs", "ms", "prof", "st", "jr", "sr", "mt", "vs"]);

/**
 * States a system, account or task is in that are not participles ("suspended", "resolved" are): each
 * replaces an opposite such as active, online or open ("the API is online" → "… is down").
 */
/** Words that make a time vague ("late May", "early next week"): an exact time after one refines it. */
export const vagueTimeWords = new Set(["late", "early", "mid", "sometime", "end", "beginning", "around", "roughly"]);

export const statusWords = new Set(["down", "live", "full", "pending", "broken"]);

/** Words that mark a statement as replacing an earlier one ("is now", "anymore"). */
export const changeMarkers = new Set(["now", "anymore", "nowadays"]);

/** Verbs of change before "from X to Y": the statement replaces X. */
export const changeVerbs = new Set(["switched", "moved", "migrated", "changed", "went", "upgraded", "downgraded", "transferred"]);

/** Determiners that make a role unique: "X is the tech lead", "X is the user's manager", "X is our dentist". */
export const definiteDeterminers = new Set(["the", "our", "my", "his", "her", "their", "your", "its"]);

export const months = new Set([
  "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
  "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
]);
export const weekdays = new Set(["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]);

export const numberWords = new Map(
  "zero one two three four five six seven eight nine ten eleven twelve".split(" ").map((w, i) => [w, String(i)]),
);

/** Units that travel with a number; a change of unit alone ("30 minutes" / "12 hours") is part of the value. */
export const units = new Set([
  "ms", "millisecond", "second", "sec", "minute", "min", "hour", "hr", "day", "week", "month", "year",
  "km", "kilometer", "kilometre", "mile", "meter", "metre", "kg", "lb", "pound", "gb", "mb", "kb", "tb",
  "percent", "%", "usd", "eur", "dollar", "euro", "k", "m", "x", "am", "pm",
]);
