// A parent that starts the model process the way src/embeddings/model-processes.ts does, hands it a big
// batch and dies at once (SIGKILL, as a crashed or killed server would): the test checks what the
// orphaned model process prints on the way out. Prints the model process's pid first.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";

const processPath = fileURLToPath(new URL("../../src/embeddings/model-process.mjs", import.meta.url));
const child = fork(processPath, [], { execArgv: [], serialization: "advanced", stdio: ["ignore", "inherit", "inherit", "ipc"] });
process.stdout.write(`${child.pid}\n`);
child.send({ runtime: "tfjs" });
child.on("message", (reply) => {
  if (reply.type !== "ready") throw new Error(JSON.stringify(reply));
  const texts = Array.from({ length: Number(process.argv[2] ?? 64) }, (_, i) => `sentence number ${i} about a deployment checklist and its rollback plan`);
  child.send({ texts });
  process.kill(process.pid, "SIGKILL");
});
