import type { MessageInitShape } from "@bufbuild/protobuf";
import type { SkillFileSchema } from "../../../../gen/agent/v1/skill_pb.js";

// Reading a skill from what the user drops or picks: one SKILL.md, or a folder holding SKILL.md and the
// skill's other files (sent as text when they are UTF-8 without NUL bytes, as base64 otherwise, as the CLI does).

export interface PickedFile {
  /** Relative to the skill's folder, "/"-separated. */
  path: string;
  file: File;
}

export interface SkillUpload {
  content: string;
  files: Array<MessageInitShape<typeof SkillFileSchema>>;
}

const hidden = (path: string) => path.split("/").some((part) => part.startsWith("."));

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(binary);
}

async function fileMessage(path: string, file: File): Promise<MessageInitShape<typeof SkillFileSchema>> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (!bytes.includes(0)) {
    try {
      return { path, data: { case: "text", value: new TextDecoder("utf-8", { fatal: true }).decode(bytes) } };
    } catch {
      // Not UTF-8: sent as base64 below.
    }
  }
  return { path, data: { case: "base64", value: base64(bytes) } };
}

/** The upload for picked files: SKILL.md (at the top of the folder, or the one file) and the rest as files. */
export async function skillUpload(picked: PickedFile[]): Promise<SkillUpload> {
  const visible = picked.filter((p) => !hidden(p.path));
  const skillMd = visible.find((p) => p.path === "SKILL.md") ?? (visible.length === 1 ? visible[0] : undefined);
  if (!skillMd) throw new Error("no SKILL.md at the top of what was dropped");
  const others = visible.filter((p) => p !== skillMd);
  return { content: await skillMd.file.text(), files: await Promise.all(others.map((p) => fileMessage(p.path, p.file))) };
}

/** Files picked with a folder input carry "folder/sub/name" paths: made relative to the folder. */
export const fromFolderInput = (files: FileList): PickedFile[] =>
  [...files].map((file) => ({ path: file.webkitRelativePath.split("/").slice(1).join("/") || file.name, file }));

const readEntries = (reader: FileSystemDirectoryReader) => new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
const entryFile = (entry: FileSystemFileEntry) => new Promise<File>((resolve, reject) => entry.file(resolve, reject));

/** At most this many files are read from a dropped folder (the API takes 64 per skill). */
const maxDroppedFiles = 200;

async function walk(dir: FileSystemDirectoryEntry, prefix: string, out: PickedFile[]): Promise<void> {
  const reader = dir.createReader();
  // readEntries answers in batches until it answers none.
  for (let batch = await readEntries(reader); batch.length > 0; batch = await readEntries(reader)) {
    for (const entry of batch) {
      if (out.length >= maxDroppedFiles || entry.name.startsWith(".")) continue;
      if (entry.isDirectory) await walk(entry as FileSystemDirectoryEntry, `${prefix}${entry.name}/`, out);
      else out.push({ path: `${prefix}${entry.name}`, file: await entryFile(entry as FileSystemFileEntry) });
    }
  }
}

/** What was dropped: one folder (its contents, relative to it) or loose files (by name). */
export async function fromDrop(data: DataTransfer): Promise<PickedFile[]> {
  const entries = [...data.items].map((item) => item.webkitGetAsEntry()).filter((e): e is FileSystemEntry => e !== null);
  const folder = entries.length === 1 && entries[0]!.isDirectory ? (entries[0] as FileSystemDirectoryEntry) : undefined;
  if (folder) {
    const out: PickedFile[] = [];
    await walk(folder, "", out);
    return out;
  }
  return [...data.files].map((file) => ({ path: file.name, file }));
}
