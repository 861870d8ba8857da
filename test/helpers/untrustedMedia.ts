// Hostile uploads for the decode-process tests and the fuzz run (docs/security.md, "Untrusted media"): seeded
// mutations of the six formats' short files, and what the service's processes have mapped.
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./paths.js";

const PYTHON = path.join(ROOT, ".venv/bin/python");

/** One short file per accepted format (test/audio/make_fixtures.py). */
export const SIX = [
  "wav_s16_16k_mono.wav",
  "flac_s16_48k_stereo.flac",
  "mp3_44k1_mono.mp3",
  "m4a_aac_44k1_stereo.m4a",
  "amr_nb_8k.amr",
  "mp4_aac_h264_video.mp4",
];

/** The fixtures (test/audio/make_fixtures.py) built in `dir` from the shared audio: name -> path. */
export function makeFixtures(dir: string, testdata: string): Record<string, string> {
  const out = execFileSync(PYTHON, [path.join(ROOT, "test/audio/make_fixtures.py"), dir, testdata], {
    encoding: "utf8",
  });
  return JSON.parse(out) as Record<string, string>;
}

const MUTATE = [
  "import sys",
  "from pathlib import Path",
  "from sori_eval.mutate import mutations",
  "src, out, seed, n = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])",
  "for i, b in enumerate(mutations(src.read_bytes(), seed, n)):",
  "    p = out / f'{src.stem}-{i}{src.suffix}'",
  "    p.write_bytes(b)",
  "    print(p)",
].join("\n");

/** `n` seeded mutations of `file` (engine/sori_eval/mutate.py, the engine tests' own), written to `dir`. */
export function mutatedCopies(file: string, dir: string, seed: string, n: number): string[] {
  return execFileSync(PYTHON, ["-c", MUTATE, file, dir, seed, String(n)], {
    cwd: path.join(ROOT, "engine"),
    encoding: "utf8",
    maxBuffer: 64 << 20,
  })
    .trim()
    .split("\n");
}

/** Every process under `root` (children, grandchildren...). */
export function descendants(root: number): number[] {
  const out = spawnSync("ps", ["-e", "-o", "pid=,ppid="], { encoding: "utf8" }).stdout;
  const children = new Map<number, number[]>();
  for (const line of out.trim().split("\n")) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    children.set(ppid!, [...(children.get(ppid!) ?? []), pid!]);
  }
  const found: number[] = [];
  const walk = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      found.push(c);
      walk(c);
    }
  };
  walk(root);
  return found;
}

/** The engines (`python -m sori_engine`) under `root`. */
export function enginesUnder(root: number): number[] {
  return descendants(root).filter((p) => {
    try {
      return fs.readFileSync(`/proc/${p}/cmdline`, "utf8").includes("-m\0sori_engine\0");
    } catch {
      return false;
    }
  });
}

/** Whether the process maps FFmpeg's demuxers or decoders. */
export function ffmpegMapped(pid: number): boolean {
  try {
    return /libav(format|codec)/.test(fs.readFileSync(`/proc/${pid}/maps`, "utf8"));
  } catch {
    return false; // it ended
  }
}
