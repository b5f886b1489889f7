/**
 * Single-flight runs of `pass` (which drains a queue and returns how many jobs it handled): a caller
 * arriving while a run is under way shares it and marks that one more pass is due, so the shared run
 * does not settle before a pass has started after that caller queued its job. `afterRun` runs at the end
 * of each run, inside it.
 */
export function coalescedRuns(pass: () => Promise<number>, stopped: () => boolean, afterRun: () => void = () => undefined) {
  let running: Promise<number> | undefined;
  let again = false;
  return {
    run(): Promise<number> {
      if (running) {
        again = true;
        return running;
      }
      running = (async () => {
        let total = 0;
        do {
          again = false;
          total += await pass();
        } while (again && !stopped());
        afterRun();
        return total;
      })().finally(() => {
        running = undefined;
      });
      return running;
    },
    /** Resolves when the run under way (if any) has ended, whether or not it failed. */
    async settled(): Promise<void> {
      await running?.catch(() => undefined);
    },
  };
}
