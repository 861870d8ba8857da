"""What a real-model test may assert about the text the model wrote, on any CPU.

The same int8 model writes slightly different words on different CPUs (the GEMM library picks its kernels by CPU
vendor and features, below CTranslate2's ISA choice; docs/models.md, "Words by CPU"), so a test never asserts a
word's spelling. It compares the text with the clip's reference instead (test/README.md), in the one normal form of
the tests and benchmarks (sori_eval.scoring):

- `cer`: the normalized character error rate, under a bound;
- `extra_tail`: characters written after the reference's last word (an invented tail: `さっきは、`, `Yeah.`, `네.`);
- `missing_tail` / `missing_head`: reference characters at the end / start that nothing written covers (a real last
  or first word that was dropped).

Each aligns the two texts with edit distance, so a word spelled another way still lines up with its reference.
"""

from __future__ import annotations

from pathlib import Path

from sori_eval import scoring, testdata
from sori_eval.scoring import cer, extra_tail, missing_head, missing_tail

__all__ = ["cer", "extra_tail", "missing_head", "missing_tail", "norm", "reference"]

norm = scoring.chars


def reference(root: Path, clip: str) -> str:
    """The clip's reference text from MANIFEST.tsv (speaker tags are dropped by the normal form)."""
    return testdata.reference(clip, root)
