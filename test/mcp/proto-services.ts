import type { DescFile, DescService } from "@bufbuild/protobuf";
import { readdirSync } from "node:fs";

/** Every service of the generated agent.v1 files, read from gen/ so a new proto file is never missed. */
export async function agentServices(): Promise<DescService[]> {
  const dir = new URL("../../gen/agent/v1/", import.meta.url);
  const modules = await Promise.all(
    readdirSync(dir)
      .filter((name) => name.endsWith("_pb.ts"))
      .map((name) => import(new URL(name.replace(/\.ts$/, ".js"), dir).href) as Promise<Record<string, unknown>>),
  );
  const files = modules.flatMap((m) => Object.entries(m).filter(([name]) => name.startsWith("file_")).map(([, file]) => file as DescFile));
  return files.flatMap((file) => file.services);
}
