import type { JsonObject } from "@bufbuild/protobuf";
import { optionalNumber, parseJsonObject, splitList } from "../format.js";

/** The editable fields of a memory as typed into a form. */
export interface MemoryDraft {
  content: string;
  type: number;
  containers: string;
  tags: string;
  metadata: string;
  confidence: string;
}

export const emptyDraft = (type: number): MemoryDraft => ({ content: "", type, containers: "", tags: "", metadata: "", confidence: "" });

/** The draft as API fields; throws InputError naming a field that cannot be read. */
export function draftFields(d: MemoryDraft): {
  content: string;
  type: number;
  containers: string[];
  tags: string[];
  metadata: JsonObject | undefined;
  confidence: number | undefined;
} {
  return {
    content: d.content,
    type: d.type,
    containers: splitList(d.containers),
    tags: splitList(d.tags),
    metadata: parseJsonObject(d.metadata, "Metadata"),
    confidence: optionalNumber(d.confidence, "Confidence"),
  };
}
