// CPU seconds of a process and its descendants, from /proc (Linux): what a benchmark charges to a server it started.
import fs from "node:fs";

const TICK_S = 0.01; // /proc/<pid>/stat counts CPU in clock ticks of 1/100 s (CLK_TCK on Linux)

/** CPU seconds (user + system) of `pid` and every live descendant. */
export function treeCpuS(pid: number): number {
  const parents = new Map<number, number>();
  const cpu = new Map<number, number>();
  for (const entry of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      parents.set(Number(entry), Number(fields[1]));
      cpu.set(Number(entry), (Number(fields[11]) + Number(fields[12])) * TICK_S);
    } catch {
      // the process ended while we looked
    }
  }
  let total = 0;
  for (const [p, s] of cpu) {
    for (let q: number | undefined = p; q !== undefined && q > 1; q = parents.get(q)) {
      if (q === pid) {
        total += s;
        break;
      }
    }
  }
  return total;
}
