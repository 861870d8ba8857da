"""Silero VAD in one pass: a window's speech probabilities, and its speech regions computed from them.

The transcriber needs both: the regions to decode, and the probabilities for the hallucination stage's speech map.
faster-whisper's `get_speech_timestamps` runs the model itself and keeps the probabilities to itself, so the two used
to be two model passes over the same audio. `regions` is its post-processing (FASTER_WHISPER_VERSION, the release
engine/pyproject.toml pins) copied without the model call, with one change: where a region reaches the maximum
length it is cut elsewhere (`regions`). `engine/tests/test_vad.py` checks that it otherwise gives what
`get_speech_timestamps` gives. `SileroScan` is faster-whisper's model call fed block by block, in small batches
with the LSTM state carried: the same probabilities without the whole input, or its largest batch, in memory (the
transcriber's windows and diarization's pass over the file both use it). `rescore_onsets` gives the transcriber's
windows the first words of speech that starts abruptly after non-speech, which the one pass holds back.
"""

from __future__ import annotations

import numpy as np
from faster_whisper.vad import VadOptions, get_vad_model

from .decode_options import DEFAULT, DecodeOptions
from .pcm import SAMPLE_RATE

FRAME = 512  # samples per Silero frame at 16 kHz
FRAME_S = FRAME / SAMPLE_RATE  # 32 ms
CONTEXT = 64  # samples of the previous frame Silero sees with each frame
# Frames per model call. faster-whisper's call runs 10,000 (320 s) at once; onnxruntime's arena then keeps that
# batch's tensors (about 300 MiB) for the life of the process. 500 frames (16 s) hold about 80 MiB for the same
# CPU time and the same probabilities (docs/audio.md, "Measurements").
BATCH_FRAMES = 500
# Silero carries its LSTM state from frame to frame, and after half a second or more of non-speech that state holds
# speech back: an utterance that starts abruptly (a recording cut mid-sentence, a call leg after digital silence or
# line noise) scores 0.0-0.2 for its first words, which score 0.5-0.9 from a fresh state that has seen up to 0.75 s
# of the non-speech before them. `rescore_onsets` scores the frames before each region again in overlapping
# pieces, each from a fresh state, and each frame keeps the larger probability (DecodeOptions.onset_*;
# docs/performance.md, "Onsets scored from a fresh state").


def probabilities(audio: np.ndarray) -> np.ndarray:
    """Silero's speech probability per 32 ms frame of 16 kHz `audio` (the last frame zero-padded): what faster-
    whisper's model call on it gives, in batches of BATCH_FRAMES."""
    if audio.size == 0:
        return np.zeros(0, dtype=np.float32)
    padded = np.pad(audio, (0, (-audio.shape[0]) % FRAME))
    padded[-CONTEXT:] = 0  # as the model call does (its context array is a view of the audio)
    scan = SileroScan()
    scan.run(padded)
    return scan.probabilities()


def rescore_onsets(
    audio: np.ndarray, probs: np.ndarray, threshold: float, options: DecodeOptions = DEFAULT
) -> np.ndarray:
    """`probs` (Silero's pass over `audio`, frame by frame) with the frames before each speech onset raised to what a
    fresh state gives them. Only runs of at least `onset_quiet_frames` under `threshold` that end at a frame over it
    are looked at, and only their last `onset_lookback_frames`: a bounded cost per region, none in silence."""
    n = min(probs.shape[0], -(-audio.shape[0] // FRAME))
    out = probs
    step = options.onset_step_frames
    for start, end in quiet_runs(probs[:n] < threshold, options.onset_quiet_frames):
        lo = max(start, end - options.onset_lookback_frames)
        for k in range(lo, end, step):
            stop = min(k + 2 * step, end)
            piece = audio[k * FRAME : stop * FRAME]
            piece = np.pad(piece, (0, (stop - k) * FRAME - piece.shape[0]))
            fresh = SileroScan().score(piece)
            if out is probs:
                out = probs.copy()
            np.maximum(out[k:stop], fresh, out=out[k:stop])
    return out


def quiet_runs(quiet: np.ndarray, min_len: int) -> list[tuple[int, int]]:
    """[start, end) of each run of True in `quiet` at least `min_len` long that is followed by a False frame."""
    edges = np.flatnonzero(np.diff(np.concatenate(([False], quiet, [False])).astype(np.int8)))
    runs = edges.reshape(-1, 2)  # each run's first frame and the frame after its last
    return [(int(a), int(b)) for a, b in runs if b - a >= min_len and b < quiet.shape[0]]


def regions(probs: np.ndarray, options: VadOptions, n_samples: int) -> list[dict]:
    """Speech regions ({"start", "end"} in samples) of audio `n_samples` long whose frame probabilities are
    `probs`: faster-whisper's get_speech_timestamps after its model call, except where a region reaches
    max_speech_duration_s. There upstream cuts at the region's last pause of 98 ms or more, often a breath inside a
    sentence; here it cuts at the longest such pause in the region's second half (the first half's, if none), and
    with no pause at all at the least speech-like frame of the second half (as pyannote's Binarize does), not at
    the frame that reached the maximum (docs/performance.md, "Where long speech is cut")."""
    threshold = options.threshold
    neg_threshold = options.neg_threshold
    if neg_threshold is None:
        neg_threshold = max(threshold - 0.15, 0.01)
    min_speech_samples = SAMPLE_RATE * options.min_speech_duration_ms / 1000
    speech_pad_samples = SAMPLE_RATE * options.speech_pad_ms / 1000
    max_speech_samples = SAMPLE_RATE * options.max_speech_duration_s - FRAME - 2 * speech_pad_samples
    min_silence_samples = SAMPLE_RATE * options.min_silence_duration_ms / 1000
    min_silence_samples_at_max_speech = SAMPLE_RATE * 98 / 1000

    triggered = False
    speeches: list[dict] = []
    current: dict = {}
    temp_end = 0  # a possible end of the current region (some silence is tolerated)
    pauses: list[list[int]] = []  # the current region's pauses of 98 ms or more: [start, end]; end -1 while open
    for i, prob in enumerate(probs):
        pos = FRAME * i
        if prob >= threshold and temp_end:
            temp_end = 0
            if pauses and pauses[-1][1] < 0:
                pauses[-1][1] = pos
        if prob >= threshold and not triggered:
            triggered = True
            current["start"] = pos
            continue
        if triggered and pos - current["start"] > max_speech_samples:
            start = current["start"]
            if pauses:
                cut = _longest(pauses, start + max_speech_samples / 2, pos)
                current["end"] = cut[0]
                speeches.append(current)
                current = {}
                if cut[1] < 0:  # the pause goes on: the region ends in it
                    triggered = False
                    pauses, temp_end = [], 0
                else:
                    current["start"] = cut[1]
                    pauses = [p for p in pauses if p[0] > cut[0]]
            else:
                lo = int(start + max_speech_samples / 2) // FRAME
                at = FRAME * (lo + int(np.argmin(probs[lo : i + 1])))
                speeches.append({"start": start, "end": at})
                current = {"start": at}
                temp_end = 0
        if prob < neg_threshold and triggered:
            if not temp_end:
                temp_end = pos
            if pos - temp_end > min_silence_samples_at_max_speech and not (pauses and pauses[-1][0] == temp_end):
                pauses.append([temp_end, -1])  # do not cut in a very short silence
            if pos - temp_end < min_silence_samples:
                continue
            current["end"] = temp_end
            if current["end"] - current["start"] > min_speech_samples:
                speeches.append(current)
            current = {}
            pauses, temp_end = [], 0
            triggered = False
            continue
    if current and n_samples - current["start"] > min_speech_samples:
        current["end"] = n_samples
        speeches.append(current)
    _pad(speeches, speech_pad_samples, n_samples)
    return speeches


def _longest(pauses: list[list[int]], after: float, now: int) -> list[int]:
    """The pause to cut a region at: the longest (the later of equals) starting after `after`, else the latest."""
    late = [p for p in pauses if p[0] >= after]
    if not late:
        return pauses[-1]
    return max(reversed(late), key=lambda p: (p[1] if p[1] >= 0 else now) - p[0])


def _pad(speeches: list[dict], pad: float, n_samples: int) -> None:
    for i, speech in enumerate(speeches):
        if i == 0:
            speech["start"] = int(max(0, speech["start"] - pad))
        if i != len(speeches) - 1:
            silence = speeches[i + 1]["start"] - speech["end"]
            if silence < 2 * pad:
                speech["end"] += int(silence // 2)
                speeches[i + 1]["start"] = int(max(0, speeches[i + 1]["start"] - silence // 2))
            else:
                speech["end"] = int(min(n_samples, speech["end"] + pad))
                speeches[i + 1]["start"] = int(max(0, speeches[i + 1]["start"] - pad))
        else:
            speech["end"] = int(min(n_samples, speech["end"] + pad))


class SileroScan:
    """faster-whisper's SileroVADModel.__call__ over a stream: the same 512-sample frames, each with the previous
    frame's last 64 samples as context, and the LSTM state carried from one encoder batch to the next, so the
    probabilities are those of one call on the whole file. That call zeroes the last 64 samples of the file's last
    (padded) frame (its context array is a view of the audio); `finish` does the same."""

    def __init__(self, batch_frames: int = BATCH_FRAMES) -> None:
        self._session = get_vad_model().session
        self._batch = batch_frames
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)
        self._pending: list[np.ndarray] = []
        self._pending_len = 0
        self._probs: list[np.ndarray] = []
        self.n_samples = 0

    def feed(self, block: np.ndarray) -> None:
        self._pending.append(block)
        self._pending_len += block.shape[0]
        self.n_samples += block.shape[0]
        size = self._batch * FRAME
        if self._pending_len >= size:
            buf = np.concatenate(self._pending)
            n = buf.shape[0] // size * size
            self.run(buf[:n])
            self._pending, self._pending_len = [buf[n:]], buf.shape[0] - n

    def run(self, audio: np.ndarray) -> None:
        """Score the frames of `audio` (a whole number of frames), the next ones of the stream, and keep them."""
        self._probs.append(self.score(audio))

    def score(self, audio: np.ndarray) -> np.ndarray:
        """The speech probabilities of the frames of `audio` (a whole number of frames), the next ones of the
        stream, without keeping them (a streaming session keeps its own, streaming.py)."""
        frames = audio.reshape(-1, FRAME)
        context = np.empty((frames.shape[0], CONTEXT), dtype=np.float32)
        context[0] = self._context
        context[1:] = frames[:-1, -CONTEXT:]
        self._context = frames[-1, -CONTEXT:].copy()
        x = np.concatenate([context, frames], axis=1)
        out: list[np.ndarray] = []
        for i in range(0, x.shape[0], self._batch):
            probs, self._h, self._c = self._session.run(
                None, {"input": x[i : i + self._batch], "h": self._h, "c": self._c}
            )
            out.append(np.asarray(probs, dtype=np.float32).reshape(-1))
        return np.concatenate(out)

    def finish(self) -> np.ndarray:
        """The speech probability of every 32 ms frame of the file."""
        rest = np.concatenate(self._pending) if self._pending else np.zeros(0, dtype=np.float32)
        padded = np.pad(rest, (0, FRAME - rest.shape[0] % FRAME))  # as faster-whisper pads the file
        padded[-CONTEXT:] = 0
        self.run(padded)
        self._pending, self._pending_len = [], 0
        return self.probabilities()

    def probabilities(self) -> np.ndarray:
        """The speech probability of every frame scored so far."""
        return np.concatenate(self._probs) if self._probs else np.zeros(0, dtype=np.float32)
