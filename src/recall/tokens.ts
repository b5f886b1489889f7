import { Tiktoken } from "js-tiktoken/lite";
import cl100k from "js-tiktoken/ranks/cl100k_base";

// _meta.tokens counts with cl100k_base, the tokenizer of OpenAI's GPT-4 and embedding models:
// a real, widely used tokenizer, bundled with the package (no download).
let encoder: Tiktoken | undefined;

export function countTokens(text: string): number {
  encoder ??= new Tiktoken(cl100k);
  return encoder.encode(text).length;
}
