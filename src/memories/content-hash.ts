import { createHash } from "node:crypto";
import { duplicateKey } from "../recall/scoring.js";

/**
 * Identity of a memory's text for duplicate detection: sha256 of the text up to case, punctuation and
 * spacing (the same normalisation recall uses to collapse near-duplicates). Stored in memories.content_hash.
 */
export const contentHash = (content: string): string => createHash("sha256").update(duplicateKey(content)).digest("hex");
