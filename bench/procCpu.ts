// CPU seconds of a process and its descendants, from /proc (Linux): what a benchmark charges to a server it started.
import fs from "node:fs";

const TICK_S = 0.01; // /proc/<pid>/stat counts CPU in clock ticks of 1/100 s (CLK_TCK on Linux)

interface Stat {
  ppid: number;
  /** utime + stime: the process's own CPU. */
  own: number;
  /** cutime + cstime: the CPU of its children that ended and were waited for (the engine's decode processes). */
  reaped: number;
}

function stats(): Map<number, Stat> {
  const out = new Map<number, Stat>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const f = stat
        .slice(stat.lastIndexOf(")") + 2)
        .split(" ")
        .map(Number);
      out.set(Number(entry), { ppid: f[1]!, own: (f[11]! + f[12]!) * TICK_S, reaped: (f[13]! + f[14]!) * TICK_S });
    } catch {
      // the process ended while we looked
    }
  }
  return out;
}

function inTree(all: Map<number, Stat>, p: number, root: number): boolean {
  for (let q: number | undefined = p; q !== undefined && q > 1; q = all.get(q)?.ppid) if (q === root) return true;
  return false;
}

/** CPU seconds (user + system) of `pid` and every live descendant, with the children each has waited for: a
 * short-lived child (a decode process) counts once it has ended, as its parent's `cutime`. */
export function treeCpuS(pid: number): number {
  const all = stats();
  let total = 0;
  for (const [p, s] of all) if (inTree(all, p, pid)) total += s.own + s.reaped;
  return total;
}

/** CPU seconds of the children that the engines under `pid` (`python -m sori_engine`) have waited for: their
 * decode processes (docs/security.md, "Untrusted media"). */
export function decodeProcessesCpuS(pid: number): number {
  const all = stats();
  let total = 0;
  for (const [p, s] of all) {
    if (!inTree(all, p, pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes("-m\0sori_engine\0")) total += s.reaped;
    } catch {
      // gone
    }
  }
  return total;
}
