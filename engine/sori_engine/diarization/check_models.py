"""The service's start check of the models file's `diarization` object (src/engine/models.ts):

    python -m sori_engine.diarization.check_models JSON

Each model it names is loaded and run once (models/custom.py checks its shapes), its options are checked against
DiarizeConfig; on a problem the message is printed and the exit status is 1.
"""

from __future__ import annotations

import sys

from ..errors import EngineError
from .speaker_models import from_json


def check(raw: str) -> str | None:
    """None when the models load and run; else what is wrong."""
    try:
        models = from_json(raw)
        if models.segmentation_entry is not None:
            models.segmentation()
        if models.embedding_entry is not None:
            models.embedding()
    except EngineError as e:
        return e.message
    return None


if __name__ == "__main__":
    problem = check(sys.argv[1])
    if problem:
        print(problem)
        sys.exit(1)
