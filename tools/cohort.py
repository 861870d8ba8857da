#!/usr/bin/env python3
"""Builds the cohort means that centre CAM++ voiceprints (engine/sori_engine/diarization/cohort.py): the mean
whole-piece embedding of the tuning part's conversations (engine/sori_eval/voices.py, as bench/diarization.py
--voices builds them), wideband and narrowband apart (each conversation's band measured as the engine measures it,
phone.band_db), written as JSON.

    flock ~/.sori-bench.lock nice -n 5 .venv/bin/python tools/cohort.py --voices ../voices --cache /tmp/conv2 \\
        --out engine/sori_engine/diarization/campplus_cohort.json

Only tuning speakers are used; the held-out part of the same folder is what checks the rule. The embeddings come
from bench/diarization.py's cache (`--cache`, the same folder as its `--voices` runs), so a rebuild after such a
run takes seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))  # diarization.py: the embedding cache
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine.diarization import DEFAULT_CONFIG
from sori_engine.diarization.models.weights import CAMPPLUS
from sori_engine.phone import band_db
from sori_eval.voices import conversations, read_voices, split

from diarization import embed_cached


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--voices", type=Path, required=True)
    ap.add_argument("--cache", type=Path)
    ap.add_argument("--per-set", type=int, default=48)
    ap.add_argument("--held", type=float, default=0.4)
    ap.add_argument("--seed", type=int, default=56)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    tune = split(read_voices(args.voices), args.held)["tune"]
    pieces: dict[str, list[np.ndarray]] = {"wide": [], "narrow": []}
    for conv in conversations(tune, "tune", args.per_set, args.seed):
        em, _ = embed_cached(conv.name, conv.samples, DEFAULT_CONFIG, args.cache)
        if em.piece_emb is not None:
            pieces["narrow" if band_db(conv.samples) < DEFAULT_CONFIG.narrowband_db else "wide"].append(em.piece_emb)
    out: dict = {
        "about": "CAM++ cohort means of whole-piece embeddings (engine/sori_engine/diarization/cohort.py), built by "
                 f"tools/cohort.py from the tuning speakers of {len(tune)} voices: "
                 f"{len(pieces['wide'])} wideband and {len(pieces['narrow'])} narrowband conversations",
        "campplus_sha256": CAMPPLUS.sha256,
        "piece": {},
    }
    for band, arrays in pieces.items():
        allv = np.concatenate(arrays)
        out["piece"][band] = [round(float(x), 6) for x in allv.mean(axis=0)]
        print(f"{band}: {allv.shape[0]} piece embeddings, mean norm {np.linalg.norm(allv.mean(axis=0)):.3f}")
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
