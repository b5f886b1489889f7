// Cost units, the currency of a plan's monthly cost ceiling:
// - writing memory content (create, or an update that changes content): 1 unit per token embedded
//   (cl100k_base tokens of the content);
// - a recall: 10 units (query embedding, search and scoring), whatever it returns.
// Reads, deletes, stats and admin calls cost nothing.

export const recallCostUnits = 10;

/** Cost of writing contents of these token counts (counted once per version, see memory-store's contentTokens). */
export const contentCostUnits = (contentTokens: readonly number[]): number => contentTokens.reduce((sum, tokens) => sum + tokens, 0);
