import type {
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  ReadResourceResult,
} from "@modelcontextprotocol/sdk/types.js";
import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { invalidRequest } from "../../errors/api-error.js";
import type { ServiceBinding } from "../service-binding.js";
import { bindRpc, callRpc, type BoundRpc } from "./rpc-caller.js";
import { protocolError } from "./tool-results.js";

// The caller's skills (authored, imported, installed and forked ones) as MCP resources and prompts,
// so an agent loads a skill the way agent tools load SKILL.md files. Listing and reading go through
// the SkillService handlers (ListSkills, ExportSkill): the same scoping and errors as REST.

const skillMime = "text/markdown";
const uriPrefix = "skill://";
// MCP's "resource not found" (the SDK has no constant for it).
const resourceNotFound = -32002;
const pageSize = 100;

interface SkillSummary {
  slug: string;
  name: string;
  description: string;
}

export interface SkillRpcs {
  list: BoundRpc;
  export: BoundRpc;
}

export function skillRpcs(bindings: ServiceBinding[]): SkillRpcs {
  return {
    list: bindRpc(bindings, "agent.v1.SkillService/ListSkills"),
    export: bindRpc(bindings, "agent.v1.SkillService/ExportSkill"),
  };
}

export const skillUri = (slug: string): string => `${uriPrefix}${slug}`;

/** The slug of a skill:// URI; ExportSkill judges the slug itself. */
export function slugOfUri(uri: string): string {
  if (!uri.startsWith(uriPrefix) || uri.length === uriPrefix.length) throw invalidRequest("uri", "format", "must be skill://<slug>");
  return uri.slice(uriPrefix.length);
}

async function skillPage(rpcs: SkillRpcs, headers: Headers, cursor: string | undefined) {
  const page = (await callRpc(rpcs.list, { pageSize, pageToken: cursor ?? "" }, headers)) as unknown as {
    skills: SkillSummary[];
    nextPageToken?: string;
  };
  return { skills: page.skills, ...(page.nextPageToken ? { nextCursor: page.nextPageToken } : {}) };
}

async function skillMd(rpcs: SkillRpcs, headers: Headers, slug: string): Promise<string> {
  const exported = (await callRpc(rpcs.export, { slug }, headers)) as { content: string };
  return exported.content;
}

export async function listSkillResources(rpcs: SkillRpcs, headers: Headers, cursor?: string): Promise<ListResourcesResult> {
  try {
    const { skills, ...next } = await skillPage(rpcs, headers, cursor);
    const resources = skills.map((s) => ({
      uri: skillUri(s.slug),
      name: s.slug,
      title: s.name,
      description: s.description,
      mimeType: skillMime,
    }));
    return { resources, ...next };
  } catch (err) {
    throw protocolError(err, ErrorCode.InvalidParams);
  }
}

export function skillResourceTemplates(): ListResourceTemplatesResult {
  return {
    resourceTemplates: [
      {
        uriTemplate: `${uriPrefix}{slug}`,
        name: "skill",
        title: "Skill",
        description: "The SKILL.md file (frontmatter and instructions) of one of your skills, by slug.",
        mimeType: skillMime,
      },
    ],
  };
}

export async function readSkillResource(rpcs: SkillRpcs, headers: Headers, uri: string): Promise<ReadResourceResult> {
  try {
    return { contents: [{ uri, mimeType: skillMime, text: await skillMd(rpcs, headers, slugOfUri(uri)) }] };
  } catch (err) {
    throw protocolError(err, resourceNotFound);
  }
}

export async function listSkillPrompts(rpcs: SkillRpcs, headers: Headers, cursor?: string): Promise<ListPromptsResult> {
  try {
    const { skills, ...next } = await skillPage(rpcs, headers, cursor);
    return { prompts: skills.map((s) => ({ name: s.slug, title: s.name, description: s.description })), ...next };
  } catch (err) {
    throw protocolError(err, ErrorCode.InvalidParams);
  }
}

/** A skill as a prompt: its SKILL.md as one user message, the way agents load a skill's instructions. */
export async function getSkillPrompt(rpcs: SkillRpcs, headers: Headers, name: string): Promise<GetPromptResult> {
  try {
    const text = await skillMd(rpcs, headers, name);
    return { messages: [{ role: "user", content: { type: "text", text } }] };
  } catch (err) {
    throw protocolError(err, ErrorCode.InvalidParams);
  }
}
