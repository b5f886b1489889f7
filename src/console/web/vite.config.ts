import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The console is served by the API server at /console/ (src/console/console-plugin.ts), from dist/console.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  // Preact's automatic JSX runtime, through Vite's own transformer (no preset plugin).
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  logLevel: "warn",
  build: {
    outDir: fileURLToPath(new URL("../../../dist/console", import.meta.url)),
    emptyOutDir: true,
    target: "es2022",
    // Modern browsers preload modules themselves; the polyfill would only add code.
    modulePreload: { polyfill: false },
    // The CSP allows no inline code: every asset is a file, however small.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
});
