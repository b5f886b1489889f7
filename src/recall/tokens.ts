import { createRequire } from "node:module";

type Cl100k = typeof import("gpt-tokenizer/encoding/cl100k_base");
type SplitPatterns = typeof import("gpt-tokenizer/encodingParams/constants");
const require = createRequire(import.meta.url);

// _meta.tokens counts with cl100k_base, the tokenizer of OpenAI's GPT-4 and embedding models:
// a real, widely used tokenizer, bundled with the package (no download). gpt-tokenizer's tables take
// about 14 MB of heap (js-tiktoken's 38 MB, with the same counts). Its cache of merges is off: once full
// (100,000 pieces), each eviction made counting slower, to 15 µs a character of random words after
// 1.6 MB of them; without it every text costs 0.5 to 0.9 µs a character.
//
// Byte-pair merging is quadratic in the length of one pre-tokeniser piece (64 KiB of "x" is one piece:
// 4.5 s), so a piece longer than `pieceBytes` UTF-8 bytes is counted in pieces of at most that many
// bytes: a slight over-count, only for such runs (words, numbers and punctuation of ordinary text are
// far shorter, and text without such runs counts exactly as cl100k_base does).
const pieceBytes = 32;

/** The tables load on the first count (about 11 MB of heap), not when a server that counts nothing starts. */
let cl100k: Cl100k | undefined;
function loadedCl100k(): Cl100k {
  if (cl100k) return cl100k;
  cl100k = require("gpt-tokenizer/encoding/cl100k_base") as Cl100k;
  cl100k.setMergeCacheSize(0);
  return cl100k;
}
// Counts of recent chunks of long pieces: a long run of one pattern repeats the same chunk.
const chunkCounts = new Map<string, number>();
const chunkCountsMax = 4096;
// The pre-tokeniser's own pattern, to find the long pieces before the encoder sees them.
const pieces = new RegExp((require("gpt-tokenizer/encodingParams/constants") as SplitPatterns).CL100K_TOKEN_SPLIT_REGEX.source, "gu");

/** UTF-8 bytes of text[from, to). */
function utf8Bytes(text: string, from: number, to: number): number {
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    bytes += c < 0x80 ? 1 : c < 0x800 ? 2 : c >= 0xd800 && c <= 0xdbff ? 2 : c >= 0xdc00 && c <= 0xdfff ? 2 : 3;
  }
  return bytes;
}

/** Special-token texts such as "<|endoftext|>" in user content are counted as plain text, never refused. */
const asPlainText = { disallowedSpecial: new Set<string>() };
const encodedLength = (text: string): number => (text === "" ? 0 : loadedCl100k().countTokens(text, asPlainText));

function chunkLength(chunk: string): number {
  let n = chunkCounts.get(chunk);
  if (n === undefined) {
    n = encodedLength(chunk);
    if (chunkCounts.size >= chunkCountsMax) chunkCounts.clear();
    chunkCounts.set(chunk, n);
  }
  return n;
}

/** Tokens of one long piece, counted in consecutive chunks of at most pieceBytes bytes (never splitting a character). */
function chunkedLength(text: string, from: number, to: number): number {
  let tokens = 0;
  let start = from;
  let bytes = 0;
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    const pair = c >= 0xd800 && c <= 0xdbff && i + 1 < to;
    const width = pair ? 4 : c < 0x80 ? 1 : c < 0x800 ? 2 : 3;
    if (bytes + width > pieceBytes) {
      tokens += chunkLength(text.slice(start, i));
      start = i;
      bytes = 0;
    }
    bytes += width;
    if (pair) i++;
  }
  return tokens + chunkLength(text.slice(start, to));
}

/** cl100k_base tokens of text; linear in its length (see pieceBytes). */
export function countTokens(text: string): number {
  let tokens = 0;
  // Text between long pieces is encoded in one call, exactly as a whole-text encode would split it.
  let plainFrom = 0;
  pieces.lastIndex = 0;
  for (let m = pieces.exec(text); m !== null; m = pieces.exec(text)) {
    const from = m.index;
    const to = from + m[0].length;
    if (to - from <= pieceBytes / 3 || utf8Bytes(text, from, to) <= pieceBytes) continue;
    tokens += encodedLength(text.slice(plainFrom, from)) + chunkedLength(text, from, to);
    plainFrom = to;
  }
  return tokens + encodedLength(text.slice(plainFrom));
}
