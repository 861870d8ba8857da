"""What a real-model test may assert about the text the model wrote, on any CPU.

The same int8 model writes slightly different words on different CPUs (the GEMM library picks its kernels by CPU
vendor and features, below CTranslate2's ISA choice; bench/cpu_dispatch.py), so a test never asserts a word's
spelling. It compares the text with the clip's reference instead (test/README.md):

- `cer`: the normalized character error rate, under a bound;
- `extra_tail`: characters written after the reference's last word (an invented tail: `さっきは、`, `Yeah.`, `네.`);
- `missing_tail` / `missing_head`: reference characters at the end / start that nothing written covers (a real last
  or first word that was dropped).

Each aligns the two texts with edit distance, so a word spelled another way still lines up with its reference.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path


def norm(text: str) -> str:
    """NFKC, lower case, letters and digits only (punctuation, symbols and spaces removed)."""
    text = unicodedata.normalize("NFKC", text).lower()
    return "".join(c for c in text if unicodedata.category(c)[0] in "LN")


def reference(testdata: Path, clip: str) -> str:
    """The clip's reference text from MANIFEST.tsv, speaker tags (`[spk1]`) removed."""
    for line in (testdata / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        if cols[0] == clip:
            return re.sub(r"\[spk\d+\]\s*", "", cols[-1])
    raise KeyError(clip)


def _last_row(hyp: str, ref: str) -> list[int]:
    """D[i][len(ref)] for every prefix hyp[:i]: the edit distance of each prefix of hyp to the whole of ref."""
    col = list(range(len(hyp) + 1))  # D[i][0]
    for j, rc in enumerate(ref, 1):
        prev, col[0] = col[0], j
        for i, hc in enumerate(hyp, 1):
            prev, col[i] = col[i], min(col[i] + 1, col[i - 1] + 1, prev + (rc != hc))
    return col


def cer(hyp: str, ref: str) -> float:
    h, r = norm(hyp), norm(ref)
    return _last_row(h, r)[-1] / max(1, len(r))


def extra_tail(hyp: str, ref: str) -> int:
    """Characters of hyp after the prefix of it that lines up best with the whole reference (ties: the longer
    prefix, so a last word spelled another way counts as that word, not as extra text)."""
    h, r = norm(hyp), norm(ref)
    row = _last_row(h, r)
    best = min(row)
    return len(h) - max(i for i, d in enumerate(row) if d == best)


def missing_tail(hyp: str, ref: str) -> int:
    """Characters at the end of the reference that no part of hyp covers."""
    return extra_tail(ref, hyp)


def missing_head(hyp: str, ref: str) -> int:
    """Characters at the start of the reference that no part of hyp covers."""
    return extra_tail(norm(ref)[::-1], norm(hyp)[::-1])
