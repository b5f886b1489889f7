import { readFileSync } from "node:fs";
import ts from "typescript";
import type { z } from "zod";
import { envSchema } from "../../src/config.js";
import { errorCodes } from "../../src/errors/codes.js";

// Tables of the documentation that are written from the code: `npm run docs` writes them, and
// test/docs/generated-tables.test.ts fails when a page's copy differs from what the code gives now.

const configSource = new URL("../../src/config.ts", import.meta.url);

/** Markdown table cells hold no pipes or line breaks. */
const cell = (text: string) => text.replace(/\s*\n\s*/g, " ").replace(/\|/g, "\\|").trim();

/** The doc comment above each variable of `envSchema` in src/config.ts. */
export function configComments(): Map<string, string> {
  const source = ts.createSourceFile("config.ts", readFileSync(configSource, "utf8"), ts.ScriptTarget.Latest, true);
  const comments = new Map<string, string>();
  const visit = (node: ts.Node): void => {
    if (ts.isVariableDeclaration(node) && node.name.getText() === "envSchema" && node.initializer && ts.isCallExpression(node.initializer)) {
      const [shape] = node.initializer.arguments;
      if (shape && ts.isObjectLiteralExpression(shape)) {
        for (const property of shape.properties) {
          const docs = ts.getJSDocCommentsAndTags(property).filter(ts.isJSDoc);
          const text = docs.map((doc) => ts.getTextOfJSDocComment(doc.comment) ?? "").join(" ");
          if (property.name) comments.set(property.name.getText(), text.replace(/\s+/g, " ").trim());
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return comments;
}

/** A default as the table shows it: byte sizes also in MiB. */
function shownDefault(value: unknown): string {
  if (value === undefined) return "unset";
  if (typeof value === "number" && value >= 1024 * 1024 && value % (1024 * 1024) === 0) return `\`${value}\` (${value / (1024 * 1024)} MiB)`;
  return `\`${String(value)}\``;
}

export interface ConfigRow {
  variable: string;
  defaultValue: string;
  meaning: string;
}

/** Every variable src/config.ts reads, its default (what the schema gives for an unset variable) and its doc comment. */
export function configRows(): ConfigRow[] {
  const comments = configComments();
  return Object.entries(envSchema.shape as Record<string, z.ZodType>).map(([variable, schema]) => {
    const parsed = schema.safeParse(undefined);
    return { variable, defaultValue: parsed.success ? shownDefault(parsed.data) : "required", meaning: comments.get(variable) ?? "" };
  });
}

/** The configuration table; `why` maps a variable to a link with the longer notes, where there are some. */
export function configTable(why: (variable: string) => string | undefined): string {
  const lines = ["| Variable | Default | Meaning |", "|---|---|---|"];
  for (const row of configRows()) {
    const link = why(row.variable);
    const meaning = cell(row.meaning) + (link ? ` [More](${link}).` : "");
    lines.push(`| \`${row.variable}\` | ${row.defaultValue} | ${meaning} |`);
  }
  return lines.join("\n");
}

export interface ListedTool {
  name: string;
  description?: string;
  inputSchema: { properties?: Record<string, { type?: unknown; description?: string }>; required?: string[] };
  outputSchema?: { properties?: Record<string, unknown> };
}

/** The first sentence of a tool's description. */
function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  const end = flat.search(/\.(\s|$)/);
  return end === -1 ? flat : flat.slice(0, end + 1);
}

/** The MCP tool table: each tool the server lists, what it does, its arguments (required ones in bold) and its answer's fields. */
export function mcpToolTable(tools: ListedTool[]): string {
  const lines = ["| Tool | What it does | Arguments (**required**) | Answer fields |", "|---|---|---|---|"];
  for (const tool of tools) {
    const required = new Set(tool.inputSchema.required ?? []);
    const args = Object.keys(tool.inputSchema.properties ?? {}).map((name) => (required.has(name) ? `**\`${name}\`**` : `\`${name}\``));
    const answer = Object.keys(tool.outputSchema?.properties ?? {}).map((name) => `\`${name}\``);
    lines.push(`| \`${tool.name}\` | ${cell(firstSentence(tool.description ?? ""))} | ${args.join(", ") || "none"} | ${answer.join(", ") || "none"} |`);
  }
  return lines.join("\n");
}

/** The error codes of src/errors/codes.ts: REST status, Connect/gRPC code and meaning. */
export function errorCodeTable(connectCodeName: (code: number) => string): string {
  const lines = ["| Code | HTTP | gRPC / Connect | Meaning |", "|---|---|---|---|"];
  for (const [code, { http, connect, summary }] of Object.entries(errorCodes)) {
    lines.push(`| \`${code}\` | ${http} | \`${connectCodeName(connect)}\` | ${cell(summary)} |`);
  }
  return lines.join("\n");
}

/** The generated part of a page: the text between `<!-- generated:NAME -->` and `<!-- /generated:NAME -->`. */
export function generatedPart(page: string, name: string): string | undefined {
  const match = new RegExp(`<!-- generated:${name} [^>]*-->\\n(?:([\\s\\S]*?)\\n)?<!-- /generated:${name} -->`).exec(page);
  return match ? (match[1] ?? "") : undefined;
}

/** The page with its generated part replaced. */
export function withGeneratedPart(page: string, name: string, content: string): string {
  if (generatedPart(page, name) === undefined) throw new Error(`the page has no <!-- generated:${name} … --> part`);
  return page.replace(new RegExp(`(<!-- generated:${name} [^>]*-->\\n)(?:[\\s\\S]*?\\n)?(<!-- /generated:${name} -->)`), (_, open: string, close: string) => `${open}${content}\n${close}`);
}
