"""The engine's modules stand in floors, and an import never runs back up a floor: a module imports only modules of
its own floor or of floors below it. So a record or a constant is reached without importing a stage above it, and
no import cycle crosses floors. From the bottom:

0. leaves, which import nothing of the package: the errors (errors.py), the audio's rate (pcm.py), a transcript's
   records (transcript.py), the decoding options (decode_options.py), the model interface (model/interface.py),
   the package's version (__init__.py), the model assembler (assemble.py), and media/child.py, which runs as a
   standalone script (`python -I child.py`) and so keeps its own SAMPLE_RATE, equal to pcm.py's;
1. the wire: protocol.py;
2. backends: the speech model's (model/), the decode process's parent (media/sandbox.py), diarization's models
   (diarization/models/);
3. inputs: audio.py, vad.py, phone.py, the loaded speech models (models.py);
4. the verdicts on decoded output (verdicts/);
5. stages: decode/, diarization/, rest_echo.py, checkpoint.py, stream_interim.py, redact_audio.py, refiner.py,
   voiceprint.py;
6. operations: transcriber.py, streaming.py, scheduler.py, op_pool.py;
7. the entry point: __main__.py.

Every module of engine/sori_engine has a floor here (a new one must be placed); faster-whisper and CTranslate2
are imported by model/ and vad.py alone (docs/engine.md, "Decoding stages": nothing in decode/ or verdicts/ does);
and the package's modules take the errors and the transcript's records from errors.py and transcript.py, not
through protocol.py's re-exports (those are for its callers outside the package). Imports inside functions count as
much as those at the top: they run too.
"""

from __future__ import annotations

import ast
from pathlib import Path

from sori_engine import pcm
from sori_engine.media import child

PACKAGE = Path(__file__).resolve().parents[1] / "sori_engine"

# Each floor's modules, by dotted name under sori_engine; a package's name stands for all its modules. A module
# belongs to the floor of the longest name that covers it (diarization.models before diarization).
FLOORS: list[tuple[str, ...]] = [
    ("", "errors", "pcm", "transcript", "decode_options", "model.interface", "assemble", "media.child"),
    ("protocol",),
    ("model", "media", "diarization.models"),
    ("audio", "vad", "phone", "models"),
    ("verdicts",),
    ("decode", "diarization", "rest_echo", "checkpoint", "stream_interim", "redact_audio", "refiner", "voiceprint"),
    ("transcriber", "streaming", "scheduler", "op_pool"),
    ("__main__",),
]
LEAVES = FLOORS[0]
MODEL_RUNTIMES = ("faster_whisper", "ctranslate2")
MAY_IMPORT_MODEL_RUNTIMES = ("model", "vad")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_package(name: str) -> bool:
    return (PACKAGE / name.replace(".", "/") / "__init__.py").exists()


def is_module(name: str) -> bool:
    return is_package(name) or (PACKAGE / (name.replace(".", "/") + ".py")).exists()


def imports(path: Path) -> tuple[set[str], set[str]]:
    return imports_of(path.read_text(encoding="utf-8"), module_name(path), path.name == "__init__.py")


def imports_of(source: str, name: str, is_init: bool = False) -> tuple[set[str], set[str]]:
    """The package's modules that module `name` imports (dotted names under sori_engine; `from . import audio`
    names audio), and the top-level names of the other packages it imports."""
    here = name.split(".") if is_init else name.split(".")[:-1]
    here = [p for p in here if p]
    own: set[str] = set()
    others: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name == "sori_engine" or alias.name.startswith("sori_engine."):
                    own.add(alias.name.removeprefix("sori_engine").removeprefix("."))
                else:
                    others.add(alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                target = node.module or ""
                if not (target == "sori_engine" or target.startswith("sori_engine.")):
                    others.add(target.split(".")[0])
                    continue
                base = target.removeprefix("sori_engine").removeprefix(".")
            else:
                up = here[: len(here) - (node.level - 1)] if node.level > 1 else here
                base = ".".join(up + ([node.module] if node.module else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}" if base else alias.name
                own.add(sub if is_module(sub) else base)
    own.discard(name)
    return own, others


def floor_of(name: str) -> int | None:
    best: tuple[int, int] | None = None  # (length of the covering name, floor)
    for floor, names in enumerate(FLOORS):
        for covering in names:
            covers = name == covering or (covering != "" and name.startswith(covering + "."))
            if covers and (best is None or len(covering) > best[0]):
                best = (len(covering), floor)
    return None if best is None else best[1]


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_module_has_a_floor() -> None:
    unplaced = [name or "__init__" for name in modules() if floor_of(name) is None]
    assert unplaced == [], f"place these modules in a floor of {__name__}.FLOORS: {unplaced}"


def test_leaves_import_nothing_of_the_package() -> None:
    found = {name: sorted(imports(path)[0]) for name, path in modules().items() if name in LEAVES}
    assert {name: imported for name, imported in found.items() if imported} == {}


def test_no_import_runs_back_up_a_floor() -> None:
    upward = []
    for name, path in modules().items():
        floor = floor_of(name)
        assert floor is not None
        for imported in sorted(imports(path)[0]):
            imported_floor = floor_of(imported)
            assert imported_floor is not None, f"{name} imports {imported}, which is in no floor"
            if imported_floor > floor:
                upward.append(f"{name} (floor {floor}) imports {imported} (floor {imported_floor})")
    assert upward == [], "\n".join(upward)


def test_only_the_model_and_vad_import_the_model_runtimes() -> None:
    importers = []
    for name, path in modules().items():
        if name.split(".")[0] in MAY_IMPORT_MODEL_RUNTIMES:
            continue
        runtimes = sorted(imports(path)[1] & set(MODEL_RUNTIMES))
        if runtimes:
            importers.append(f"{name} imports {', '.join(runtimes)}")
    assert importers == [], "\n".join(importers)


def test_the_decode_process_decodes_at_the_engine_rate() -> None:
    # child.py cannot import pcm.py (it runs with the package off sys.path): its own constant must agree.
    assert child.SAMPLE_RATE == pcm.SAMPLE_RATE


def test_the_parser_sees_every_form_of_import() -> None:
    source = (
        "import numpy as np\n"
        "import sori_engine.vad\n"
        "from faster_whisper.vad import VadOptions\n"
        "from .. import audio as audio_io\n"
        "from ..decode import rounds\n"
        "from ..errors import EngineError\n"
        "from .turns import FRAME_S\n"
        "def later():\n"
        "    from ..scheduler import Scheduler\n"
    )
    own, others = imports_of(source, "diarization.pipeline")
    assert own == {"vad", "audio", "decode.rounds", "errors", "diarization.turns", "scheduler"}
    assert others == {"numpy", "faster_whisper"}
    assert floor_of("diarization.models.campplus") == 2 and floor_of("diarization.pipeline") == 5
    assert floor_of("scheduler") == 6 and floor_of("no_such_module") is None


def defined_names(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


def test_errors_and_records_come_from_their_own_modules() -> None:
    homed = defined_names(PACKAGE / "errors.py") | defined_names(PACKAGE / "transcript.py")
    through_protocol = []
    for name, path in modules().items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module in ("protocol", "sori_engine.protocol"):
                taken = sorted({alias.name for alias in node.names} & homed)
                if taken:
                    through_protocol.append(f"{name} takes {', '.join(taken)} from protocol")
    assert through_protocol == [], "\n".join(through_protocol)
