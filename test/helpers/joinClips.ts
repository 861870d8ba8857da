// Shared clips joined end to end into one 16 kHz mono WAV, decoded by the engine's own decoder (so the input is
// exactly what the engine would decode from the clips): the long inputs of the resume test and the benches.
import { spawnSync } from "node:child_process";
import path from "node:path";
import { ROOT, TESTDATA } from "./server.js";

const SCRIPT = [
  "import sys, wave, numpy as np",
  "from sori_engine import audio",
  "x = np.concatenate([audio.decode(p) for p in sys.argv[2:]])",
  "w = wave.open(sys.argv[1], 'wb'); w.setnchannels(1); w.setsampwidth(2); w.setframerate(16000)",
  "w.writeframes(np.round(x * 32768).clip(-32768, 32767).astype('<i2').tobytes()); w.close()",
].join("\n");

/** Writes `clips` (paths under the shared testdata) to `out`, one after the other. */
export function joinClips(out: string, clips: readonly string[]): void {
  const r = spawnSync(
    path.join(ROOT, ".venv/bin/python"),
    ["-c", SCRIPT, out, ...clips.map((c) => path.join(TESTDATA, c))],
    { cwd: path.join(ROOT, "engine"), encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`joining ${clips.join(", ")} failed: ${r.stderr}`);
}
