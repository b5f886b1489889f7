import DOMPurify from "dompurify";
import { Marked } from "marked";
import { useMemo } from "preact/hooks";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

// SKILL.md bodies are other people's text. Raw HTML in them is shown as text, never parsed (so not even the
// sanitiser's inert document sees an event handler); what Markdown makes is sanitised by DOMPurify before
// it touches the DOM (javascript: links, styles). The CSP blocks remote images and anything inline besides.
const markdown = new Marked({ gfm: true, async: false, renderer: { html: ({ text }) => escapeHtml(text) } });

export function renderMarkdown(text: string): string {
  return DOMPurify.sanitize(markdown.parse(text) as string, { FORBID_TAGS: ["style", "form", "input", "button"], FORBID_ATTR: ["style"] });
}

export function Markdown({ text, label }: { text: string; label: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return <article class="markdown" aria-label={label} dangerouslySetInnerHTML={{ __html: html }} />;
}
