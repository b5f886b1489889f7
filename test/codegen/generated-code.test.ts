import { createFileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { getComments } from "@bufbuild/protoplugin";
import { execFile } from "node:child_process";
import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);

async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(dir, path.join(e.parentPath, e.name))).sort();
}

describe("gen/", () => {
  it("matches what `buf generate` writes from proto/ (run `npm run generate` when this fails)", async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), "agentmem-gen-"));
    try {
      await run("npx", ["buf", "generate", "--output", out], { timeout: 120_000 });
      const fresh = path.join(out, "gen");
      const files = await listFiles(fresh);
      expect(await listFiles("gen")).toEqual(files);
      for (const file of files) {
        expect(await readFile(path.join("gen", file), "utf8"), `gen/${file} is stale`).toBe(
          await readFile(path.join(fresh, file), "utf8"),
        );
      }
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it("documents every service and RPC of ours once, in its proto comment, which the OpenAPI document carries", async () => {
    const out = await mkdtemp(path.join(os.tmpdir(), "agentmem-image-"));
    try {
      // An image with source info: the comments are not in the generated code's embedded descriptors.
      await run("npx", ["buf", "build", "--output", path.join(out, "image.binpb")], { timeout: 60_000 });
      const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, await readFile(path.join(out, "image.binpb"))));
      const openApi = JSON.parse(await readFile("gen/openapi.json", "utf8"));
      const operations = new Map<string, { summary?: string; description?: string }>();
      type Operation = { operationId: string; summary?: string; description?: string };
      for (const methods of Object.values(openApi.paths) as Array<Record<string, Operation>>) {
        for (const op of Object.values(methods)) operations.set(op.operationId, op);
      }
      const services = [...registry.files].filter((f) => f.proto.name.startsWith("agent/")).flatMap((f) => f.services);
      expect(services.length).toBeGreaterThan(0);
      const undocumented: string[] = [];
      for (const service of services) {
        if (!getComments(service).leading?.trim()) undocumented.push(service.typeName);
        for (const method of service.methods) {
          const comment = getComments(method).leading?.split("\n").map((line) => line.trim()).join("\n").trim();
          if (!comment) undocumented.push(`${service.typeName}.${method.name}`);
          const op = operations.get(`${service.name}_${method.name}`);
          // Every RPC of ours has a REST route; its description is the comment (its summary alone when that is one sentence).
          expect(op, `${service.name}.${method.name} has no REST operation`).toBeDefined();
          expect(op!.description ?? op!.summary, `${service.name}.${method.name}`).toBe(comment);
        }
      }
      expect(undocumented).toEqual([]);
    } finally {
      await rm(out, { recursive: true, force: true });
    }
  });

  it("passes buf lint", async () => {
    await expect(run("npx", ["buf", "lint"], { timeout: 60_000 })).resolves.toBeDefined();
  });
});
