// CPU time and RSS of this process together with its child processes (the built-in embedder runs its
// model in children), read from /proc: Linux only.
import { readdirSync, readFileSync } from "node:fs";

// USER_HZ: the unit of utime/stime in /proc/<pid>/stat; 100 on every Linux build Node supports.
const ticksPerSecond = 100;
const pageBytes = 4096;

/** Resident memory of a process in MB, from /proc/<pid>/status. */
export function rssMb(pid: number | "self"): number {
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

/**
 * Fields of /proc/<pid>/stat (all its threads), or of one thread's, after the command name (which may
 * contain spaces): [state, ppid, …].
 */
function statFields(pid: number, thread?: number): string[] | undefined {
  try {
    const stat = readFileSync(thread === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${thread}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  } catch {
    return undefined; // the process has exited
  }
}

export function children(parent = process.pid): number[] {
  return readdirSync("/proc")
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => statFields(pid)?.[1] === String(parent));
}

/** utime + stime of fields read by statFields, in ms: fields 14 and 15 of stat, i.e. 11 and 12 after the command name. */
const cpuMsOf = (fields: string[] | undefined) => (fields ? ((Number(fields[11]) + Number(fields[12])) * 1000) / ticksPerSecond : 0);

/** CPU milliseconds used so far by this process and by its living children. */
export function treeCpuMs(): { own: number; children: number } {
  const own = process.cpuUsage();
  const childMs = children().reduce((sum, pid) => sum + cpuMsOf(statFields(pid)), 0);
  return { own: (own.user + own.system) / 1000, children: childMs };
}

/** CPU ms of a server process by where it is spent: its main thread, LanceDB's threads, its other threads, its children. */
export interface ServerCpuMs {
  main: number;
  lancedb: number;
  other: number;
  children: number;
}

/** The CPU a server process (another process, e.g. one the bench started) has used so far, split by thread. */
export function serverCpuMs(pid: number): ServerCpuMs {
  const cpu: ServerCpuMs = { main: 0, lancedb: 0, other: 0, children: 0 };
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return cpu; // the server has exited
  }
  for (const task of tasks) {
    const ms = cpuMsOf(statFields(pid, Number(task)));
    if (Number(task) === pid) cpu.main += ms;
    // LanceDB's async runtime (tokio) and its CPU pool, by the thread names they set.
    else if (/^(tokio-rt-worker|lance-cpu)/.test(readFileSync(`/proc/${pid}/task/${task}/comm`, "utf8"))) cpu.lancedb += ms;
    else cpu.other += ms;
  }
  for (const child of children(pid)) cpu.children += cpuMsOf(statFields(child));
  return cpu;
}

/**
 * The CPU a server used between two readings of serverCpuMs, divided by `per` (its calls, or seconds), each
 * share rounded to `digits` decimals when given.
 */
export function cpuBetween(before: ServerCpuMs, after: ServerCpuMs, per: number, digits?: number): ServerCpuMs {
  const share = (key: keyof ServerCpuMs) => {
    const value = (after[key] - before[key]) / per;
    return digits === undefined ? value : Number(value.toFixed(digits));
  };
  return { main: share("main"), lancedb: share("lancedb"), other: share("other"), children: share("children") };
}

/**
 * CPU ms used so far by the PostgreSQL processes on this machine: each postmaster with the backends it has
 * reaped (cutime and cstime) and the living backends, so a connection closed mid-phase still counts.
 */
export function postgresCpuMs(): number {
  let ms = 0;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || commOf(name) !== "postgres") continue;
    const fields = statFields(Number(name));
    if (!fields) continue;
    ms += cpuMsOf(fields);
    if (commOf(fields[1]!) !== "postgres") ms += ((Number(fields[13]) + Number(fields[14])) * 1000) / ticksPerSecond;
  }
  return ms;
}

/** A process's command name, or undefined once it has exited. */
function commOf(pid: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trimEnd();
  } catch {
    return undefined;
  }
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
