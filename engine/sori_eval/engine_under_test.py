"""Which checkout's engine a benchmark runs, and engine constants overridden for one run.

`select(argv)` reads `--engine-root DIR` before anything imports `sori_engine` and puts that checkout's `engine/`
first on `sys.path` (default: this checkout), so a "before" is another worktree with the same models and inputs.
`set_constant("fw_batched.ENCODER_MIN_S=30")` overrides a module constant for the run (`--set`).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

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


def set_constant(assignment: str) -> None:
    """MODULE.NAME=VALUE: sori_engine.MODULE's constant NAME set to VALUE, read as the constant's type (a bool from
    0/1/false/true)."""
    name, value = assignment.split("=", 1)
    module_name, attr = name.rsplit(".", 1)
    target = importlib.import_module(f"sori_engine.{module_name}")
    if not hasattr(target, attr):
        raise SystemExit(f"sori_engine.{module_name} has no {attr}")
    kind = type(getattr(target, attr))
    setattr(target, attr, value.lower() in ("1", "true") if kind is bool else kind(value))
