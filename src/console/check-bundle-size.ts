import { checkBundleSize } from "./bundle-size.js";
import { defaultConsoleDir } from "./console-dir.js";

// `npm run build` runs this after `vite build`: prints the console's gzipped JavaScript size, fails above the budget.
const result = checkBundleSize(process.argv[2] ?? defaultConsoleDir);
(result.ok ? console.log : console.error)(result.message);
process.exitCode = result.ok ? 0 : 1;
