"""The house rule on module constants: a tunable belongs in an options record (decode_options.py, diarization/
config.py, a stage's own record such as voiceprint.VoiceprintOptions), typed and defaulted, not in a module global.

What is counted: a number bound at module level to an upper-case name (private or not) that someone chose and could
change. Not counted, because nobody tunes them: input limits (`MAX_` / `MIN_`, refused beyond), a format's or a
trained network's fixed facts (the 16 kHz rate, Silero's and the fbank's frames, the 10 ms grid, everything in
diarization/models/), the kernel's ABI numbers the decode child passes to prctl and clone, and a stored format's
version. The engine keeps at most 15 tunables as module constants (issue 70); this test lists them when it fails.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import sori_engine

PACKAGE = Path(sori_engine.__file__).parent
LIMIT = 15
# (module path, name): fixed by a format, a model, the kernel or a stored format, not chosen
FIXED = {
    ("pcm.py", "SAMPLE_RATE"),
    ("media/child.py", "SAMPLE_RATE"),  # pcm.py's, in a standalone script
    ("media/child.py", "INPUT_FD"),
    ("media/child.py", "PR_SET_PDEATHSIG"),
    ("media/child.py", "CLONE_THREAD"),
    ("vad.py", "FRAME"),
    ("vad.py", "FRAME_S"),
    ("vad.py", "CONTEXT"),
    ("diarization/regions.py", "HOP"),
    ("diarization/turns.py", "FRAME_S"),
    ("checkpoint.py", "VERSION"),
}


def module_tunables() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("diarization/models/") or rel.endswith(("options.py", "config.py")):
            continue
        name = "sori_engine." + rel.removesuffix(".py").replace("/", ".").removesuffix(".__init__")
        module = importlib.import_module(name)
        source = path.read_text(encoding="utf-8")
        for key, value in vars(module).items():
            if not re.fullmatch(r"_?[A-Z][A-Z0-9_]+", key) or re.match(r"_?(MAX|MIN)_", key):
                continue
            if isinstance(value, bool) or not isinstance(value, (int, float)) or (rel, key) in FIXED:
                continue
            if re.search(rf"^{key}\s*(:[^=]+)?=", source, re.MULTILINE):  # bound here, not imported
                found.append(f"{rel}:{key}")
    return found


def test_few_tunables_live_in_module_globals() -> None:
    tunables = module_tunables()
    assert len(tunables) <= LIMIT, f"{len(tunables)} tunables as module constants (at most {LIMIT}): {tunables}"


def test_fixed_names_still_exist() -> None:
    """An entry of FIXED whose constant went away is taken out, so the list stays the truth."""
    for rel, key in FIXED:
        assert re.search(rf"^{key}\s*(:[^=]+)?=", (PACKAGE / rel).read_text(), re.MULTILINE), (rel, key)
