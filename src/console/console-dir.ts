import { fileURLToPath } from "node:url";

/** Where `npm run build` writes the console, and where the server looks for it unless CONSOLE_DIR says otherwise. */
export const defaultConsoleDir = fileURLToPath(new URL("../../dist/console/", import.meta.url));
