// CPU time and RSS of this process together with its child processes (the built-in embedder runs its
// model in children), read from /proc: Linux only.
import { readdirSync, readFileSync } from "node:fs";

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux build Node supports.
const ticksPerSecond = 100;
const pageBytes = 4096;

/** Fields of /proc/<pid>/stat after the command name (which may contain spaces): [state, ppid, …]. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // the process has exited
  }
}

function children(): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => statFields(pid)?.[1] === String(process.pid));
}

/** CPU milliseconds used so far by this process and by its living children. */
export function treeCpuMs(): { own: number; children: number } {
  const own = process.cpuUsage();
  const childTicks = children().reduce((sum, pid) => {
    const fields = statFields(pid);
    // utime and stime are fields 14 and 15 of stat, i.e. 11 and 12 after the command name.
    return sum + (fields ? Number(fields[11]) + Number(fields[12]) : 0);
  }, 0);
  return { own: (own.user + own.system) / 1000, children: (childTicks * 1000) / ticksPerSecond };
}

/** Resident memory of this process and of each living child, in MB. */
export function treeRssMb(): { own: number; children: number } {
  const childBytes = children().reduce((sum, pid) => {
    try {
      return sum + Number(readFileSync(`/proc/${pid}/statm`, "utf8").split(" ")[1]) * pageBytes;
    } catch {
      return sum;
    }
  }, 0);
  return { own: Math.round(process.memoryUsage().rss / 1e6), children: Math.round(childBytes / 1e6) };
}
