"""Which speaker models diarization and the voiceprint op run: pyannote segmentation-3.0 and CAM++ (built in), or an
operator's ONNX models in their place (models/custom.py), named by SORI_DIARIZATION_MODELS with the settings they
come with (docs/diarization.md, "Bring your own models"). check_models.py is the service's start check of them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache

from ..errors import MODEL_LOAD_FAILED, EngineError
from .config import DEFAULT_CONFIG, DiarizeConfig, with_overrides
from .embedders import EmbeddingModel
from .models.custom import Entry, OnnxEmbedding, OnnxSegmentation, parse_models
from .models.segmentation import SegmentationModel


@dataclass(frozen=True)
class SpeakerModels:
    """The two models (None: the built-in one) and the diarization settings for them."""

    segmentation_entry: Entry | None = None
    embedding_entry: Entry | None = None
    config: DiarizeConfig = DEFAULT_CONFIG

    def segmentation(self) -> SegmentationModel:
        if self.segmentation_entry is not None:
            return _custom_segmentation(self.segmentation_entry)
        from .models.segmentation import get_model
        from .models.weights import SEGMENTATION

        return _builtin(get_model, SEGMENTATION)

    def embedding(self) -> EmbeddingModel:
        if self.embedding_entry is not None:
            return _custom_embedding(self.embedding_entry)
        from .models.campplus import get_model
        from .models.weights import CAMPPLUS

        return _builtin(get_model, CAMPPLUS)

    @property
    def builtin_embedding(self) -> bool:
        """CAM++: its voiceprints are centred by the cohort means built for it (cohort.py)."""
        return self.embedding_entry is None

    def voiceprint_model(self, cohort_version: str) -> str:
        """The name stored with a voiceprint: prints of two names are never compared (voiceprint.py)."""
        from .models.weights import CAMPPLUS

        if self.embedding_entry is None:
            return f"campplus-{CAMPPLUS.sha256[:12]}-piece10-cohort-{cohort_version}"
        return f"onnx-{_sha256(self.embedding_entry)[:12]}-piece10"


def _builtin(get_model, weights):  # type: ignore[no-untyped-def]
    """A built-in model (get_model: its module's OnePerFile) of its checked weights file."""
    from .models.torch_checkpoint import CheckpointError
    from .models.weights import WeightsMissing, locate

    try:
        return get_model(locate(weights))
    except (WeightsMissing, CheckpointError) as e:
        raise EngineError(MODEL_LOAD_FAILED, str(e)) from e


@lru_cache(maxsize=4)
def _custom_segmentation(entry: Entry) -> OnnxSegmentation:
    return OnnxSegmentation(entry)


@lru_cache(maxsize=4)
def _custom_embedding(entry: Entry) -> OnnxEmbedding:
    return OnnxEmbedding(entry)


@lru_cache(maxsize=4)
def _sha256(entry: Entry) -> str:
    return entry.sha256


@lru_cache(maxsize=4)
def from_json(raw: str | None) -> SpeakerModels:
    """The models SORI_DIARIZATION_MODELS's JSON names (None or empty: the built-in ones)."""
    if not raw:
        return SpeakerModels()
    seg, emb, options = parse_models(raw)
    try:
        config = with_overrides(DEFAULT_CONFIG, options)
    except ValueError as e:
        raise EngineError(MODEL_LOAD_FAILED, str(e)) from e
    return SpeakerModels(seg, emb, config)


def speaker_models() -> SpeakerModels:
    """The engine's models, from its environment."""
    return from_json(os.environ.get("SORI_DIARIZATION_MODELS"))
