// Loaded with `node --import` (through NODE_OPTIONS, which refuses --cpu-prof) when CPU_PROFILE_DIR is set:
// the first SIGUSR2 starts V8's sampling profiler on the main thread, the second writes
// CPU_PROFILE_DIR/<pid>.cpuprofile, so a benchmark profiles one phase only.
import { Session } from "node:inspector";
import { writeFileSync } from "node:fs";

const dir = process.env.CPU_PROFILE_DIR;
if (dir && process.argv.some((a) => a.endsWith("src/main.ts"))) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 500 });
  let running = false;
  process.on("SIGUSR2", () => {
    if (!running) {
      running = true;
      session.post("Profiler.start");
      return;
    }
    running = false;
    session.post("Profiler.stop", (err, res) => {
      if (!err) writeFileSync(`${dir}/${process.pid}.cpuprofile`, JSON.stringify(res.profile));
    });
  });
}
