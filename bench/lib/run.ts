// How every benchmark script runs: resources are released in reverse order however the run ends
// (success, failure, Ctrl-C or its own time limit), so no server or scratch database outlives it.

const cleanups: Array<() => Promise<void> | void> = [];

export function onCleanUp(release: () => Promise<void> | void): void {
  cleanups.push(release);
}

async function cleanUp(): Promise<void> {
  for (let release = cleanups.pop(); release; release = cleanups.pop()) {
    await Promise.resolve()
      .then(release)
      .catch((err: unknown) => console.error("cleanup failed:", err));
  }
}

/** Whatever hangs, the run ends by itself after this many seconds. */
export function stopAfter(seconds: number): void {
  setTimeout(() => {
    console.error(`bench exceeded --timeout ${seconds} s; stopping`);
    void cleanUp().then(() => process.exit(1));
  }, seconds * 1000).unref();
}

/** Runs main, cleans up, and exits with main's exit code (1 on failure, 130 on Ctrl-C). */
export function runBench(main: () => Promise<number>): void {
  process.once("SIGINT", () => {
    console.error("interrupted; stopping the server");
    void cleanUp().then(() => process.exit(130));
  });
  main().then(
    async (code) => {
      await cleanUp();
      process.exit(code);
    },
    async (err: unknown) => {
      console.error(err);
      await cleanUp();
      process.exit(1);
    },
  );
}

/** A command-line option that must be a positive integer. */
export function positiveOption(name: string, text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name} must be a positive integer, got "${text}"`);
  return n;
}
