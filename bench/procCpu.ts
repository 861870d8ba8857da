// CPU seconds of processes from /proc (Linux): what a benchmark charges to a server it started (treeCpuS), to its
// engines' decode processes (decodeProcessesCpuS), or to a set of process trees that come and go (sampleCpu).
import fs from "node:fs";

const TICK_S = 0.01; // /proc/<pid>/stat counts CPU in clock ticks of 1/100 s (CLK_TCK on Linux)

interface Stat {
  ppid: number;
  /** utime + stime: the process's own CPU. */
  own: number;
  /** cutime + cstime: the CPU of its children that ended and were waited for (the engine's decode processes). */
  reaped: number;
}

function stat(pid: number): Stat | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing ')'.
    const f = s
      .slice(s.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    return { ppid: f[1]!, own: (f[11]! + f[12]!) * TICK_S, reaped: (f[13]! + f[14]!) * TICK_S };
  } catch {
    return null; // the process ended while we looked
  }
}

function stats(): Map<number, Stat> {
  const out = new Map<number, Stat>();
  for (const entry of fs.readdirSync("/proc")) {
    const s = /^\d+$/.test(entry) ? stat(Number(entry)) : null;
    if (s) out.set(Number(entry), s);
  }
  return out;
}

/** CPU seconds (user + system) of one live process, its children not counted; null once it has gone. */
export const ownCpuS = (pid: number): number | null => stat(pid)?.own ?? null;

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

export interface CpuSampler {
  /** CPU seconds of every process seen under the roots so far. */
  seconds(): number;
  stop(): void;
}

/** CPU time of the trees under the pids `roots()` returns (read again at every sample: restarted processes join):
 * every second the own CPU of each live process under them is read and the last value seen per process is kept, so
 * a process killed between two samples loses at most a second of its CPU. */
export function sampleCpu(roots: () => number[]): CpuSampler {
  const last = new Map<number, number>(); // pids are not reused within a run here
  const sample = (): void => {
    const all = stats();
    const alive = new Set(roots().filter((r) => all.has(r)));
    for (const [p, s] of all) if ([...alive].some((r) => inTree(all, p, r))) last.set(p, s.own);
  };
  sample();
  const timer = setInterval(sample, 1000);
  timer.unref();
  return {
    seconds: () => {
      sample();
      return [...last.values()].reduce((a, t) => a + t, 0);
    },
    stop: () => clearInterval(timer),
  };
}
