"""The `voiceprint` op (docs/engine.md): one speaker embedding per voice, for known speakers (docs/speakers.md).

A request names voices; each voice is speech from one or more parts: a file (or one channel of it), either whole
(its speech found as diarization finds it: segmentation-3.0 joined with Silero VAD) or only the given spans (a
diarized speaker's turns, which are speech already). The speech is cut into pieces of at most `piece_s` and CAM++
embeds each piece whole (diarization/embedders.py with one window per piece); each unit-norm piece embedding, less
the cohort mean of its file's band (diarization/cohort.py: wideband, or narrowband as a phone call), goes into the
voice's embedding: their mean weighted by length, unit-norm. With `count_voices`, the voice's speech is also embedded
in diarization's 1 s windows, and each file's windows are clustered as diarization estimates a count
(clustering.py); the voices are the most any file holds, and at least two when two files' own voiceprints score below
`files_same_voice_sim` (two files of one band, raw prints) or `files_cross_band_sim` (a wideband and a narrowband file,
each print centred by its band's cohort mean) (VoiceprintOptions): an enrollment whose audio holds several voices is
refused by the service. Files are compared by their voiceprints, not by pooling their windows, so one person recorded
in several rooms or on several phones is one voice (pooled windows split by room: docs/speakers.md).

The result's `model` names the embedding model and this recipe (SpeakerModels.voiceprint_model): a stored voiceprint
is only ever compared with one of the same name (the service refuses otherwise), so a change to either makes a new
name. An operator's embedding model (diarization/models/custom.py) has no cohort means: its prints are not centred.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import audio
from .diarization import DiarizeConfig, SpeakerModels, cohort, embed_blocks, speaker_models
from .diarization.clustering import cluster
from .diarization.embedders import EmbeddingModel, PieceEmbedder
from .diarization.regions import HOP, split_long
from .diarization.turns import FRAME_S
from .errors import bad_request
from .pcm import SAMPLE_RATE
from .phone import BandScan, phone_band
from .protocol import is_number, is_span

MAX_VOICES = 20_000  # a job's speakers and each of its utterances (docs/speakers.md): a 4-hour call has a few thousand
MAX_PARTS = 16
MAX_SPANS = 100_000


@dataclass(frozen=True)
class VoiceprintOptions:
    """count_voices (enrollment): two files of one band whose raw voiceprints score below `files_same_voice_sim` are
    two voices; a wideband and a narrowband file are compared by their prints centred by their own band's cohort mean,
    at `files_cross_band_sim` (raw, one person in a studio and on the phone scores as low as two people)."""

    files_same_voice_sim: float = 0.35
    files_cross_band_sim: float = 0.25


@dataclass(frozen=True)
class _Recipe:
    """What every print of one request is made with: the embedding model, diarization's settings (its 1 s windows),
    the same with one window per piece, whether prints are centred by the cohort means, and the options."""

    model: EmbeddingModel
    cfg: DiarizeConfig
    piece_cfg: DiarizeConfig
    centred: bool
    options: VoiceprintOptions

    @staticmethod
    def of(models: SpeakerModels, options: VoiceprintOptions) -> _Recipe:
        cfg = models.config
        piece = dataclasses.replace(cfg, window_s=cfg.piece_s, step_s=cfg.piece_s)
        return _Recipe(models.embedding(), cfg, piece, models.builtin_embedding, options)

    def centre(self, emb: np.ndarray, narrowband: bool) -> np.ndarray:
        return cohort.centre(emb, narrowband) if self.centred else emb


@dataclass(frozen=True)
class Part:
    audio_path: str
    channel: int | None = None
    spans: tuple[tuple[float, float], ...] | None = None  # seconds; None: find the speech in the whole part


@dataclass(frozen=True)
class VoiceprintParams:
    voices: tuple[tuple[Part, ...], ...]
    count_voices: bool = False
    max_duration_s: float | None = None
    phone_prints: bool = False


def _part(obj: Any) -> Part:
    if not isinstance(obj, dict):
        raise bad_request("each part must be an object")
    path = obj.get("audio_path")
    if not isinstance(path, str) or not path:
        raise bad_request("field audio_path must be a non-empty string")
    channel = obj.get("channel")
    if channel is not None and (not isinstance(channel, int) or isinstance(channel, bool) or channel < 0):
        raise bad_request("field channel must be an integer >= 0")
    spans = obj.get("spans")
    if spans is not None:
        if not isinstance(spans, list) or len(spans) > MAX_SPANS or not all(is_span(s) for s in spans):
            raise bad_request(f"field spans must be a list of at most {MAX_SPANS} [start, end] seconds")
        spans = tuple(sorted((float(a), float(b)) for a, b in spans))
    return Part(path, channel, spans)


def parse_voiceprint(params: Mapping[str, Any]) -> VoiceprintParams:
    voices = params.get("voices")
    if not isinstance(voices, list) or not 1 <= len(voices) <= MAX_VOICES:
        raise bad_request(f"field voices must be a list of 1 to {MAX_VOICES} voices")
    parsed = []
    for v in voices:
        parts = v.get("parts") if isinstance(v, dict) else None
        if not isinstance(parts, list) or not 1 <= len(parts) <= MAX_PARTS:
            raise bad_request(f"each voice needs parts: a list of 1 to {MAX_PARTS} parts")
        parsed.append(tuple(_part(p) for p in parts))
    count = params.get("count_voices", False)
    if not isinstance(count, bool):
        raise bad_request("field count_voices must be a boolean")
    max_duration = params.get("max_duration_s")
    if max_duration is not None and (not is_number(max_duration) or max_duration <= 0):
        raise bad_request("field max_duration_s must be a number > 0")
    phone = params.get("phone_prints", False)
    if not isinstance(phone, bool):
        raise bad_request("field phone_prints must be a boolean")
    return VoiceprintParams(
        tuple(parsed), count, float(max_duration) if max_duration is not None else None, phone_prints=phone
    )


@dataclass(frozen=True)
class _FilePrint:
    """A voice's print in one of its files, for count_voices: raw, centred by the file's band, and that band."""

    raw: np.ndarray
    centred: np.ndarray
    narrowband: bool


@dataclass
class _Voice:
    pieces: list[np.ndarray] = dataclasses.field(default_factory=list)
    weights: list[float] = dataclasses.field(default_factory=list)
    windows: list[np.ndarray] = dataclasses.field(default_factory=list)  # 1 s windows, for count_voices
    files: list[_FilePrint] = dataclasses.field(default_factory=list)  # its print in each file, for count_voices
    phone_pieces: list[np.ndarray] = dataclasses.field(default_factory=list)  # as a phone line passes them
    phone_weights: list[float] = dataclasses.field(default_factory=list)
    narrowband: list[bool] = dataclasses.field(default_factory=list)  # each file's band
    speech_frames: int = 0
    count: bool = False  # count the voices in its speech
    phone: bool = False  # also print it as heard on the phone
    recipe: _Recipe | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "speech_s": round(self.speech_frames * FRAME_S, 2),
            "embedding": _mean(self.pieces, self.weights),
            "narrowband": bool(self.narrowband) and all(self.narrowband),
        }
        if self.phone:
            out["embedding_phone"] = _mean(self.phone_pieces, self.phone_weights)
        if self.count:
            out["voices"] = self.voices()
        return out

    def voices(self) -> int:
        """The most voices one file holds, and two when two files are different voices."""
        assert self.recipe is not None
        per_file = [int(cluster(w, 0, self.recipe.cfg).max()) + 1 for w in self.windows if w.shape[0]]
        n = max(per_file, default=0)
        if len(self.files) > 1 and self._files_differ():
            n = max(n, 2)
        return n

    def _files_differ(self) -> bool:
        """Two files are two voices: one band's raw prints below files_same_voice_sim; across bands, the centred
        prints below files_cross_band_sim (a phone line moves every raw embedding: one person in a studio and on the
        phone was refused in 27 of the voices folder's 63 such enrollments, docs/speakers.md)."""
        raw = np.stack([f.raw for f in self.files])
        centred = np.stack([f.centred for f in self.files])
        band = np.asarray([f.narrowband for f in self.files])
        i, j = np.triu_indices(len(self.files), 1)
        same_band = band[i] == band[j]
        sim = np.where(same_band, (raw @ raw.T)[i, j], (centred @ centred.T)[i, j])
        assert self.recipe is not None
        opts = self.recipe.options
        floor = np.where(same_band, opts.files_same_voice_sim, opts.files_cross_band_sim)
        return bool((sim < floor).any())


def _unit_mean(pieces: np.ndarray, weights: list[float]) -> np.ndarray:
    """The rows' mean weighted by `weights`, unit-norm."""
    mean = np.average(pieces, axis=0, weights=np.asarray(weights))
    return mean / max(float(np.linalg.norm(mean)), 1e-8)


def _mean(pieces: list[np.ndarray], weights: list[float]) -> list[float] | None:
    """The pieces' mean weighted by length, unit-norm (rounded for JSON); None without pieces."""
    if not pieces:
        return None
    emb = _unit_mean(np.stack(pieces), weights)
    return [round(float(x), 6) for x in emb]


class _Embedders:
    """One voice's embedders over units of one file: each unit whole; with `windows` also in diarization's 1 s
    windows (for count_voices); with `phone` also each unit as a phone line passes it (phone_prints, wideband
    files: a narrowband file's pieces are its phone print already)."""

    def __init__(self, recipe: _Recipe, n_samples: int, windows: bool, phone: bool) -> None:
        self.recipe = recipe
        self.whole = PieceEmbedder(recipe.model, recipe.piece_cfg, n_samples)
        self.win = PieceEmbedder(recipe.model, recipe.cfg, n_samples) if windows else None
        self.phone = PieceEmbedder(recipe.model, recipe.piece_cfg, n_samples) if phone else None

    def add(self, unit: tuple[int, int], samples: np.ndarray) -> None:
        self.whole.add(unit, samples)
        if self.win is not None:
            self.win.add(unit, samples)
        if self.phone is not None:
            self.phone.add(unit, phone_band(samples)[: samples.shape[0]])

    def into(self, voice: _Voice, narrowband: bool) -> None:
        got, emb = self.whole.result()
        centred = self.recipe.centre(emb, narrowband)
        voice.pieces.extend(centred)
        weights = [float(b - a) for a, b in got]
        voice.weights.extend(weights)
        voice.narrowband.append(narrowband)
        if voice.phone and narrowband:
            voice.phone_pieces.extend(centred)
            voice.phone_weights.extend(weights)
        elif self.phone is not None:
            got_p, emb_p = self.phone.result()
            voice.phone_pieces.extend(self.recipe.centre(emb_p, True))
            voice.phone_weights.extend(float(b - a) for a, b in got_p)
        if len(emb):
            # count_voices compares files of one band by their raw voiceprints, for which files_same_voice_sim was
            # chosen (centred at the same 0.35, the files alone refused 8 of the voices folder's 63 one-speaker sets),
            # and files of two bands by their centred ones (_Voice._files_differ)
            voice.files.append(_FilePrint(_unit_mean(emb, weights), _unit_mean(centred, weights), narrowband))
        if self.win is not None:
            voice.windows.append(self.win.result()[1])


def _embed_file(
    blocks: Callable[[], Any],
    n_samples: int,
    units: list[tuple[int, list[tuple[int, int]]]],
    voices: list[_Voice],
    windows: bool,
    narrowband: bool,
) -> None:
    """Every voice's units (frames) of one file in one pass over it: (voice index, its units); with `windows` also
    the 1 s windows that count_voices clusters. `narrowband`: the file's band, whose cohort mean centres its pieces."""
    embedders: dict[int, _Embedders] = {}
    spans: list[tuple[tuple[int, tuple[int, int]], tuple[int, int]]] = []
    for vi, own in units:
        voice = voices[vi]
        assert voice.recipe is not None
        piece = max(1, round(voice.recipe.cfg.piece_s / FRAME_S))
        voice.speech_frames += sum(b - a for a, b in own)
        emb = embedders.setdefault(vi, _Embedders(voice.recipe, n_samples, windows, voice.phone and not narrowband))
        spans.extend(((vi, u), sp) for u in split_long(own, piece) if (sp := emb.whole.span(u)) is not None)
    spans.sort(key=lambda s: s[1][0])
    for (vi, unit), samples in audio.cut_spans(blocks(), spans):
        embedders[vi].add(unit, samples)
    for vi, emb in embedders.items():
        emb.into(voices[vi], narrowband)


def voiceprint(
    params: VoiceprintParams,
    progress: Callable[[float], None] | None = None,
    options: VoiceprintOptions = VoiceprintOptions(),
) -> dict[str, Any]:
    models = speaker_models()
    recipe = _Recipe.of(models, options)
    cfg = recipe.cfg
    voices = [_Voice(count=params.count_voices, phone=params.phone_prints, recipe=recipe) for _ in params.voices]
    whole: list[tuple[int, Part]] = []
    by_file: dict[tuple[str, int | None], list[tuple[int, Part]]] = {}
    for vi, parts in enumerate(params.voices):
        for part in parts:
            if part.spans is None:
                whole.append((vi, part))
            else:
                by_file.setdefault((part.audio_path, part.channel), []).append((vi, part))
    steps = len(whole) + len(by_file)
    done = 0

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done / steps)

    for vi, part in whole:

        def blocks(p: Part = part) -> Any:
            return audio.stream(p.audio_path, params.max_duration_s, p.channel)

        # The whole part: its speech as diarization finds it (segmentation-3.0 and Silero VAD), whose 1 s window
        # embeddings are what count_voices clusters.
        em = embed_blocks(blocks, cfg, models)
        if params.count_voices and em.emb.shape[0]:
            voices[vi].windows.append(em.emb)
        narrow = em.narrowband(cfg)
        _embed_file(blocks, round(em.duration_s * SAMPLE_RATE), [(vi, list(em.regions))], voices, False, narrow)
        step()
    for (path, channel), file_parts in by_file.items():

        def file_blocks(path: str = path, channel: int | None = channel) -> Any:
            return audio.stream(path, params.max_duration_s, channel)

        band, n = BandScan(), 0
        for b in file_blocks():
            band.feed(b)
            n += b.shape[0]
        last = n // HOP
        units = []
        for vi, part in file_parts:
            frames = [(round(a / FRAME_S), min(last, round(b / FRAME_S))) for a, b in part.spans or ()]
            units.append((vi, [(a, b) for a, b in frames if b > a]))
        _embed_file(file_blocks, n, units, voices, params.count_voices, band.finish() < cfg.narrowband_db)
        step()
    return {"model": models.voiceprint_model(cohort.version()), "voices": [v.to_json() for v in voices]}
