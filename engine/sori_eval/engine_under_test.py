"""Which checkout's engine a benchmark runs, and decoding options overridden for one run.

`select(argv)` reads `--engine-root DIR` before anything imports `sori_engine` and puts that checkout's `engine/`
first on `sys.path` (default: this checkout), so a "before" is another worktree with the same models and inputs.
`decode_options(["encoder_min_s=30"])` is DecodeOptions with those fields overridden (`--set`), checked as a
SORI_MODELS_FILE's are; it is passed in the request's model entry, never written into engine modules.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from .testdata import REPO_ROOT


def select(argv: list[str]) -> Path:
    """The checkout named by `--engine-root DIR` / `--engine-root=DIR` in argv (default: this one), its engine/ put
    first on sys.path. Call before importing sori_engine."""
    root = REPO_ROOT
    for i, arg in enumerate(argv):
        if arg == "--engine-root" and i + 1 < len(argv):
            root = Path(argv[i + 1]).resolve()
        elif arg.startswith("--engine-root="):
            root = Path(arg.split("=", 1)[1]).resolve()
    if "sori_engine" in sys.modules and not sys.modules["sori_engine"].__file__.startswith(str(root / "engine")):  # type: ignore[union-attr]
        raise SystemExit("sori_engine was imported before the engine root was chosen")
    sys.path.insert(0, str(root / "engine"))
    return root


def decode_options(assignments: list[str], base: Any = None) -> Any:
    """FIELD=VALUE assignments: sori_engine's DecodeOptions (`base`, default DEFAULT) with those fields overridden,
    checked as a SORI_MODELS_FILE's overrides are. Import after `select`."""
    from sori_engine.decode_options import DEFAULT, with_overrides

    overrides = {}
    for assignment in assignments:
        name, value = assignment.split("=", 1)
        overrides[name] = float(value)
    try:
        return with_overrides(base or DEFAULT, overrides, "--set")
    except (TypeError, ValueError) as e:
        raise SystemExit(str(e)) from None
