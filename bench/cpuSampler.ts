// CPU time of a set of process trees that come and go (killed workers, restarted APIs, their engines): every second
// the utime + stime of each live process under the given roots is read from /proc and the last value seen per
// process is kept, so a process killed between two samples loses at most a second of its CPU. Linux only.
import fs from "node:fs";

const TICKS_PER_S = 100; // USER_HZ on Linux

function readStat(pid: number): { ppid: number; ticks: number } | null {
  try {
    const s = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its closing ')'.
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) };
  } catch {
    return null; // gone
  }
}

export interface CpuSampler {
  /** CPU seconds of every process seen under the roots so far. */
  seconds(): number;
  stop(): void;
}

/** Samples the trees under the pids `roots()` returns (read again at every sample: restarted processes join). */
export function sampleCpu(roots: () => number[]): CpuSampler {
  const last = new Map<string, number>(); // "<pid>:<start>" would be exact; pids are not reused within a run here
  const sample = (): void => {
    const children = new Map<number, number[]>();
    const stats = new Map<number, number>();
    for (const name of fs.readdirSync("/proc")) {
      if (!/^\d+$/.test(name)) continue;
      const st = readStat(Number(name));
      if (!st) continue;
      stats.set(Number(name), st.ticks);
      children.set(st.ppid, [...(children.get(st.ppid) ?? []), Number(name)]);
    }
    const todo = roots().filter((p) => stats.has(p));
    const seen = new Set<number>();
    while (todo.length) {
      const p = todo.pop()!;
      if (seen.has(p)) continue;
      seen.add(p);
      last.set(String(p), stats.get(p)!);
      todo.push(...(children.get(p) ?? []));
    }
  };
  sample();
  const timer = setInterval(sample, 1000);
  timer.unref();
  return {
    seconds: () => {
      sample();
      return [...last.values()].reduce((a, t) => a + t, 0) / TICKS_PER_S;
    },
    stop: () => clearInterval(timer),
  };
}
