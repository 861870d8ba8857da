// 8 kHz phone copies of the shared clips, made at test time with the engine's PyAV (the licenses forbid keeping
// transcoded copies in the repository): s16le mono, what a telephone agent streams.
import { spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT } from "../helpers/server.js";

const SCRIPT = `
import sys, av, numpy as np
out = []
r = av.AudioResampler(format="s16", layout="mono", rate=int(sys.argv[3]))
with av.open(sys.argv[1]) as c:
    for f in c.decode(audio=0):
        out.extend(g.to_ndarray()[0] for g in r.resample(f))
out.extend(g.to_ndarray()[0] for g in r.resample(None))
open(sys.argv[2], "wb").write(np.concatenate(out).astype("<i2").tobytes())
`;

/** Writes `src` as raw s16le mono at `rate` into a temp file and returns its path. */
export function phoneCopy(src: string, rate = 8000): string {
  const dst = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "sori-stream-")), `${path.basename(src)}.${rate}.raw`);
  const r = spawnSync(path.join(ROOT, ".venv", "bin", "python"), ["-c", SCRIPT, src, dst, String(rate)], {
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`phone copy of ${src} failed: ${r.stderr}`);
  return dst;
}
