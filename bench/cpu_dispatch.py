"""Does the CPU dispatch of the int8 GEMM change the words the model writes?

Transcribes a few shared clips with whisper-base int8 (beam 5, language fixed, as `sommers` decodes) once per
setting, each setting in its own process because CTranslate2 and MKL read their variables when they load, and prints
per setting how many clips' text differ from the default run's and the normalized CER against the references.

    .venv/bin/python bench/cpu_dispatch.py [--threads 0,1,2]

The settings: CTranslate2's `CT2_FORCE_CPU_ISA` (GENERIC, AVX2, AVX512), `CT2_USE_MKL` (CTranslate2 uses MKL for
the GEMMs only on a genuine Intel CPU unless told, oneDNN elsewhere: src/cpu/backend.cc), MKL's conditional numerical reproducibility (`MKL_CBWR=COMPATIBLE`, `AVX2`), MKL's
`MKL_ENABLE_INSTRUCTIONS=AVX2`, and the thread count (`cpu_threads`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TESTDATA = Path(os.environ.get("SORI_TESTDATA", REPO.parent / "shared" / "testdata"))
CLIPS = [
    "ja/common_voice_ja_38852485_16k.wav",
    "ja/common_voice_ja_38853932_16k.wav",
    "ja/picovoice_leopard_test_ja.wav",
    "ko/deeply_studioapt_sub100101a00080.wav",
    "ko/deeply_anechoic_sub100121a00083.wav",
    "ko/picovoice_leopard_test_ko.wav",
    "en/whisper_jfk.flac",
    "en/picovoice_leopard_test_en_librispeech.wav",
]
SETTINGS: dict[str, dict[str, str]] = {
    "default": {},
    "CT2_FORCE_CPU_ISA=GENERIC": {"CT2_FORCE_CPU_ISA": "GENERIC"},
    "CT2_FORCE_CPU_ISA=AVX2": {"CT2_FORCE_CPU_ISA": "AVX2"},
    "CT2_FORCE_CPU_ISA=AVX512": {"CT2_FORCE_CPU_ISA": "AVX512"},
    "CT2_USE_MKL=0": {"CT2_USE_MKL": "0"},
    "CT2_USE_MKL=1": {"CT2_USE_MKL": "1"},
    "CT2_USE_MKL=1 MKL_CBWR=COMPATIBLE": {"CT2_USE_MKL": "1", "MKL_CBWR": "COMPATIBLE"},
    "CT2_USE_MKL=1 MKL_CBWR=AVX2": {"CT2_USE_MKL": "1", "MKL_CBWR": "AVX2"},
    "MKL_CBWR=COMPATIBLE": {"MKL_CBWR": "COMPATIBLE"},
    "MKL_CBWR=AVX2": {"MKL_CBWR": "AVX2"},
    "MKL_ENABLE_INSTRUCTIONS=AVX2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
}


def child(threads: int) -> None:
    import ctranslate2
    from faster_whisper import WhisperModel

    model = WhisperModel(str(REPO / "models" / "whisper-base"), device="cpu", compute_type="int8", cpu_threads=threads)
    out = {"isa": os.environ.get("CT2_FORCE_CPU_ISA", ""), "ct2": ctranslate2.__version__, "texts": {}}
    started = time.process_time()
    for clip in CLIPS:
        lang = clip.split("/")[0]
        segments, _ = model.transcribe(str(TESTDATA / clip), language=lang, beam_size=5, vad_filter=False)
        out["texts"][clip] = "".join(s.text for s in segments).strip()
    out["cpu_s"] = time.process_time() - started
    print(json.dumps(out, ensure_ascii=False))


def references() -> dict[str, str]:
    refs = {}
    for line in (TESTDATA / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        refs[cols[0]] = cols[-1]
    return refs


def norm(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] in "LN")


def cer(hyp: str, ref: str) -> float:
    h, r = norm(hyp), norm(ref)
    row = list(range(len(h) + 1))
    for i, rc in enumerate(r, 1):
        prev, row[0] = row[0], i
        for j, hc in enumerate(h, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (rc != hc))
    return row[-1] / max(1, len(r))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="0", help="comma-separated cpu_threads values (0: CTranslate2's default)")
    ap.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child is not None:
        return child(args.child)
    refs = references()
    base: dict[str, str] | None = None
    print(f"{'setting':34} {'threads':>7} {'clips differing':>16} {'mean CER':>9} {'CPU s':>6}")
    for threads in [int(t) for t in args.threads.split(",")]:
        for name, env in SETTINGS.items():
            proc = subprocess.run(
                [sys.executable, __file__, "--child", str(threads)],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                check=True,
            )
            out = json.loads(proc.stdout.strip().splitlines()[-1])
            texts = out["texts"]
            base = base or texts
            differing = [c for c in CLIPS if texts[c] != base[c]]
            mean = sum(cer(texts[c], refs[c]) for c in CLIPS) / len(CLIPS)
            print(f"{name:34} {threads:>7} {len(differing):>10} of {len(CLIPS)} {mean:>9.3f} {out['cpu_s']:>6.1f}")
            for c in differing:
                print(f"    {c}: {texts[c]}")
    print("\nthe default run's texts:")
    for c in CLIPS:
        print(f"    {c}: {base[c]}" if base else "")


if __name__ == "__main__":
    main()
