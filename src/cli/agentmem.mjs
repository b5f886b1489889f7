#!/usr/bin/env node
// The package's `agentmem` bin: loads the TypeScript CLI through tsx so it runs from a clean `npm ci`.
import { tsImport } from "tsx/esm/api";

await tsImport("./main.ts", import.meta.url);
