"""Cohort centring of CAM++ voiceprints (docs/speakers.md, "Bands and cohort centring"): each piece embedding less the
mean piece embedding of many speakers heard through the same band (phone.BandScan: wideband, or narrowband as on a phone
call), before a voice's pieces are averaged.

What all speakers of a band share (the channel, and what CAM++ hears in any voice) is a large part of a raw
embedding: different speakers of one sex score about 0.13 against each other wideband and 0.41 narrowband, so no
one cosine could tell a stranger on both. Less the cohort mean of their band they score about 0.05 and 0.09, and one
threshold serves both. The means (campplus_cohort.json) are built by tools/cohort.py from the tuning speakers of
engine/sori_eval/voices.py's conversations, never from the held-out ones.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path

import numpy as np

_COHORT_FILE = Path(__file__).with_name("campplus_cohort.json")


@lru_cache(maxsize=1)
def _means() -> dict[str, np.ndarray]:
    raw = json.loads(_COHORT_FILE.read_text(encoding="utf-8"))
    return {band: np.asarray(v, np.float32) for band, v in raw["piece"].items()}


@lru_cache(maxsize=1)
def version() -> str:
    """A short hash of the means: part of the voiceprint model's name, so that voiceprints centred by other means
    are never compared with these."""
    return hashlib.sha256(_COHORT_FILE.read_bytes()).hexdigest()[:8]


def centre(emb: np.ndarray, narrowband: bool) -> np.ndarray:
    """Unit-norm piece embeddings (n, 192) less the cohort mean of their band (not normalised again: the caller
    averages them and normalises the mean)."""
    return (emb - _means()["narrow" if narrowband else "wide"]).astype(np.float32)
