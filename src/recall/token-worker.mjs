// Worker thread that counts tokens of large writes, so a batch of long contents (a 4 MiB body holds
// about 1.6 MB of text: seconds of BPE) never blocks the server's event loop. The counting itself is
// tokens.ts, loaded through tsx so this file starts the same under tsx, vitest and plain node.
// Protocol: each posted {id, texts} is answered with {id, counts}.
import { parentPort } from "node:worker_threads";
import { register } from "tsx/esm/api";

register();
const { countTokens } = await import("./tokens.ts");

parentPort.on("message", ({ id, texts }) => {
  parentPort.postMessage({ id, counts: texts.map(countTokens) });
});
