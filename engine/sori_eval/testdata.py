"""The shared test audio (`../shared/testdata`, or SORI_TESTDATA) and its references: the one reader of
MANIFEST.tsv (columns local_file, lang, repo, path, license, transcript)."""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTDATA = Path(os.environ.get("SORI_TESTDATA", REPO_ROOT.parent / "shared" / "testdata"))


@dataclass(frozen=True)
class Clip:
    file: str  # path under TESTDATA, e.g. ko/picovoice_leopard_test_ko.wav
    lang: str
    reference: str  # as the manifest writes it: speaker tags ([spk1]) kept; the normal form drops them

    @property
    def path(self) -> Path:
        return TESTDATA / self.file


def manifest(testdata: Path = TESTDATA) -> list[Clip]:
    """Every row of MANIFEST.tsv, in its order."""
    with open(testdata / "MANIFEST.tsv", encoding="utf-8", newline="") as f:
        rows = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        return [Clip(r["local_file"], r["lang"], r["transcript"] or "") for r in rows]


def clips(langs: list[str], testdata: Path = TESTDATA) -> list[Clip]:
    """The clips with a reference in the folders `<lang>/` of `langs`, sorted by file name, language by language."""
    rows = manifest(testdata)
    return [
        c for lang in langs for c in sorted(rows, key=lambda c: c.file) if c.reference and c.file.startswith(f"{lang}/")
    ]


def reference(clip: str, testdata: Path = TESTDATA) -> str:
    """One clip's reference text by its file name under the test data."""
    for c in manifest(testdata):
        if c.file == clip:
            return c.reference
    raise KeyError(clip)
