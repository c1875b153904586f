import { readdirSync, readFileSync } from "node:fs";
import os from "node:os";

/**
 * How busy the machine and our own processes were during a benchmark, from /proc (Linux): the
 * figures beside orders/s that say whether a slow run was slow or starved. Elsewhere (no /proc)
 * every reading is undefined and the benchmark prints "n/a".
 */

const clockTicksPerSecond = 100; // USER_HZ; 100 on every Linux this runs on (getconf CLK_TCK)

function readProcStat(pid: number): { ppid: number; cpuTicks: number; childTicks: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state): ppid is field 4, utime..cstime are fields 14..17.
    return {
      ppid: Number(fields[1]),
      cpuTicks: Number(fields[11]) + Number(fields[12]),
      childTicks: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined;
  }
}

/**
 * CPU ms used so far by a process tree's root and its live children, plus the children it has
 * reaped (a PostgreSQL server: the postmaster and its backends, those that ended included).
 */
export function processTreeCpuMs(rootPid: number): number | undefined {
  const root = readProcStat(rootPid);
  if (!root) return undefined;
  let ticks = root.cpuTicks + root.childTicks;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const child = readProcStat(Number(entry));
    if (child && child.ppid === rootPid) ticks += child.cpuTicks + child.childTicks;
  }
  return (ticks * 1000) / clockTicksPerSecond;
}

/** The machine's busy and total CPU time so far (all cores), from the first line of /proc/stat. */
export function machineCpuMs(): { busy: number; total: number } | undefined {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0] ?? "";
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const total = ticks.reduce((sum, value) => sum + value, 0);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0); // idle + iowait
    return {
      busy: ((total - idle) * 1000) / clockTicksPerSecond,
      total: (total * 1000) / clockTicksPerSecond,
    };
  } catch {
    return undefined;
  }
}

export function loadAverage(): number {
  return os.loadavg()[0] ?? 0;
}

export function coreCount(): number {
  return os.availableParallelism();
}
