"""What the faster-whisper backend copies of faster-whisper's internals, with sori's changes: the batched
pipeline's forward() keeping a clip's unfinished last segment, each clip encoded in its own window, silence padding.

`BatchedInferencePipeline.forward` is not public API: it is copied here from the faster-whisper release named by
FASTER_WHISPER_VERSION, with the changes KeepTailPipeline's docstring lists. Importing this module fails on any other
release, so an upgrade cannot silently run an old copy against new internals: diff the new upstream forward() with
this one, carry the change over, then move FASTER_WHISPER_VERSION and engine/pyproject.toml's pin together. Only
the backend (faster_whisper_backend.py) and this module import faster-whisper or CTranslate2.
"""

from __future__ import annotations

import math
import threading
import weakref
from collections import OrderedDict

import ctranslate2
import faster_whisper
import numpy as np
from faster_whisper import BatchedInferencePipeline, WhisperModel
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import get_compression_ratio

from ..pcm import SAMPLE_RATE

FASTER_WHISPER_VERSION = "1.2.1"

if faster_whisper.__version__ != FASTER_WHISPER_VERSION:
    raise ImportError(
        f"sori_engine.model.faster_whisper_pipeline copies BatchedInferencePipeline.forward from faster-whisper "
        f"{FASTER_WHISPER_VERSION}, "
        f"but {faster_whisper.__version__} is installed: compare the two and update the copy (module docstring)"
    )


class KeepTailPipeline(BatchedInferencePipeline):
    """faster-whisper's batched pipeline, keeping the text after a clip's last timestamp pair, with the encoder
    sized to the batch's clips.

    WhisperModel._split_segments_by_timestamps drops an unfinished last segment (text after the last pair of
    timestamp tokens, with no closing timestamp) because the sequential seek loop decodes it again from the last
    timestamp. The batched pipeline has no such loop, so upstream those words are lost (the last words of a chunk
    whose speech runs to its end). Here they become a segment that ends at the clip's end.

    Upstream pads every clip's features to Whisper's 30 s window with zeros. Here the batch is cut to `window_frames`
    when set (a streaming utterance, streaming.py), else to its longest clip plus `margin_s`, at least `min_s`
    (`encoder_frames`; DecodeOptions.encoder_margin_s, encoder_min_s): CTranslate2's encoder takes any length up to
    the window and costs much less than proportionally less on a shorter one, and the decoder's cross-attention
    shrinks with it. Each clip's frames after its audio are the log-mel of silence (what Whisper's own padding of
    the audio gives): in a short window, zero features cost accuracy (docs/performance.md, "Encoder sized to the
    clip"). forward() is upstream's (FASTER_WHISPER_VERSION) with those two changes, and it tells the encoder each
    clip's own window.

    On CPU the encoder runs one clip at a time, each in its own window (`encode_clip_by_clip`); the beam search still
    decodes the batch."""

    def __init__(
        self, model: WhisperModel, window_frames: int | None = None, margin_s: float = 1.0, min_s: float = 10.0
    ) -> None:
        super().__init__(ClipByClipEncoder(model))
        self.window_frames = window_frames
        self.margin_s = margin_s
        self.min_s = min_s

    def frames(self, durations_s: list[float], window_frames: int) -> int:
        return encoder_frames(durations_s, window_frames, self.model, self.margin_s, self.min_s)

    def forward(self, features, tokenizer, chunks_metadata, options):  # type: ignore[no-untyped-def]
        frames = self.window_frames or self.frames([m["duration"] for m in chunks_metadata], features.shape[-1])
        features = silence_padded(features, chunks_metadata, frames, self.model.frames_per_second)
        if self.window_frames is None:  # a streaming utterance keeps its fixed window
            self.model.own_frames = [self.frames([m["duration"]], frames) for m in chunks_metadata]
        try:  # generate_segment_batched calls self.model.encode(features): ClipByClipEncoder.encode
            encoder_output, outputs = self.generate_segment_batched(features, tokenizer, options)
        finally:
            self.model.own_frames = None
        segmented_outputs = []
        segment_sizes = []
        for chunk_metadata, output in zip(chunks_metadata, outputs, strict=False):
            duration = chunk_metadata["duration"]
            segment_size = int(np.ceil(duration) * self.model.frames_per_second)
            segment_sizes.append(segment_size)
            subsegments = split_keeping_tail(
                self.model, tokenizer, output["tokens"], chunk_metadata["offset"], segment_size, duration
            )
            segmented_outputs.append(
                [
                    {
                        "text": tokenizer.decode(sub["tokens"]),
                        "avg_logprob": output["avg_logprob"],
                        "no_speech_prob": output["no_speech_prob"],
                        "tokens": sub["tokens"],
                        "start": sub["start"],
                        "end": sub["end"],
                        "compression_ratio": get_compression_ratio(tokenizer.decode(sub["tokens"])),
                        "seek": clip_seek(chunk_metadata["offset"], self.model.frames_per_second),
                    }
                    for sub in subsegments
                ]
            )
        if options.word_timestamps:
            self.last_speech_timestamp = self.model.add_word_timestamps(
                segmented_outputs,
                tokenizer,
                encoder_output,
                segment_sizes,
                options.prepend_punctuations,
                options.append_punctuations,
                self.last_speech_timestamp,
            )
        return segmented_outputs


class ClipByClipEncoder:
    """A WhisperModel whose encode() is `encode_clip_by_clip`, with the clips' own windows while `own_frames` is set
    (KeepTailPipeline.forward sets it for one batch); everything else is the model's. One per pipeline, so per call."""

    def __init__(self, model: WhisperModel) -> None:
        self._model = model
        self.own_frames: list[int] | None = None

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self._model, name)

    def encode(self, features: np.ndarray) -> ctranslate2.StorageView:
        return encode_clip_by_clip(self._model, features, self.own_frames)


def encode_clip_by_clip(
    model: WhisperModel, features: np.ndarray, own_frames: list[int] | None = None
) -> ctranslate2.StorageView:
    """The encoder output of a batch of features (batch, mels, frames), the clips encoded one at a time on CPU.
    There CTranslate2's encoder costs more per clip in a batch than alone, while the decoder gains from the batch:
    the decoder takes the stacked outputs, the batched encoder's to float rounding. On GPU the batch is the gain,
    and it is encoded whole.

    With `own_frames`, clip i is encoded in its own window of `own_frames[i]` frames (its audio and margin,
    `encoder_frames`) and its output after that is the encoder output of silence at the same positions
    (`silence_output`), so that the batch still decodes together: the encoder's cost grows faster than its window,
    so a short chunk is not encoded as long as its batch's longest. The decoder's cross-attention reads the filler as
    the padding it is (docs/performance.md, "Each clip in its own window")."""
    if model.model.device != "cpu" or features.ndim == 2 or features.shape[0] == 1:
        return model.encode(features)
    frames = features.shape[-1]
    outputs = []
    for i in range(features.shape[0]):
        n = frames if own_frames is None else min(own_frames[i], frames)
        out = np.asarray(model.encode(features[i : i + 1, :, :n]))
        if n < frames:  # silence_padded set the frames after the clip's audio to its log-mel of silence
            filler = silence_output(model, features.shape[1], float(features[i, 0, frames - 1]))
            out = np.concatenate([out, filler[:, out.shape[1] : frames // 2]], axis=1)
        outputs.append(out)
    return ctranslate2.StorageView.from_array(np.concatenate(outputs))  # a new, contiguous array


class SilenceOutputs:
    """The encoder output (1, window / 2, d_model) of a whole window of constant features at a level (a clip's
    log-mel of silence, silence_padded), rounded to `step`, kept per model for the `levels` most recently used
    levels. Few levels occur (the floor is the clip's loudest feature less 2: -1.0 to -0.5 for speech at usual
    levels), so each costs one encoder pass over a whole window once (whisper-base: 3 MB each, large-v3: 7.7 MB)."""

    def __init__(self, levels: int = 8, step: float = 0.1) -> None:
        self.levels = levels
        self.step = step
        self._by_model: weakref.WeakKeyDictionary[WhisperModel, OrderedDict[tuple[int, float], np.ndarray]] = (
            weakref.WeakKeyDictionary()
        )
        self._lock = threading.Lock()  # the engine's decoders ask from several threads

    def get(self, model: WhisperModel, mels: int, level: float) -> np.ndarray:
        level = round(level / self.step) * self.step
        key = (mels, level)
        with self._lock:
            cache = self._by_model.setdefault(model, OrderedDict())
            held = cache.get(key)
            if held is not None:
                cache.move_to_end(key)
                return held
        window = np.full((1, mels, model.feature_extractor.nb_max_frames), level, dtype=np.float32)
        out = np.asarray(model.encode(window))  # outside the lock: two threads may both encode it, once
        with self._lock:
            cache[key] = out
            while len(cache) > self.levels:
                cache.popitem(last=False)
        return out

    def held(self, model: WhisperModel) -> int:
        """Levels held for `model`."""
        return len(self._by_model.get(model, ()))


SILENCE_OUTPUTS = SilenceOutputs()


def silence_output(model: WhisperModel, mels: int, level: float) -> np.ndarray:
    """The encoder output of a window of silence at `level` (SILENCE_OUTPUTS)."""
    return SILENCE_OUTPUTS.get(model, mels, level)


def encoder_frames(
    durations_s: list[float], window_frames: int, model: WhisperModel, margin_s: float, min_s: float
) -> int:
    """Feature frames the encoder needs for clips of these lengths: the longest plus `margin_s`, at least `min_s`,
    in whole seconds (an even count: the encoder's first convolution has stride 2), at most the window."""
    fps = model.frames_per_second
    needed = math.ceil(max(max(durations_s, default=0.0) + margin_s, min_s)) * fps
    return int(min(window_frames, needed + needed % 2))


def clip_seek(offset_s: float, frames_per_second: int) -> int:
    """The `seek` every segment of a clip carries: the clip's start (`offset`, seconds) in whole feature frames."""
    return int(offset_s * frames_per_second)


def seek_of_clip(start_s: float, frames_per_second: int) -> int:
    """The `seek` of a clip passed to `transcribe` as starting at `start_s`: faster-whisper turns the start into
    whole samples and back into seconds (the clip's `offset`), then `clip_seek`. Not int(start_s * fps): 74.32 s is
    7431.999... frames in floating point."""
    return clip_seek(int(start_s * SAMPLE_RATE) / SAMPLE_RATE, frames_per_second)


def split_by_timestamps(
    model: WhisperModel, tokenizer: Tokenizer, tokens: list[int], offset: float, segment_size: int, duration: float
) -> list[dict]:
    """faster-whisper's split of a clip's tokens into segments at pairs of timestamp tokens
    (WhisperModel._split_segments_by_timestamps), which leaves out text after the last pair."""
    subsegments, _seek, _single_ending = model._split_segments_by_timestamps(
        tokenizer=tokenizer,
        tokens=tokens,
        time_offset=offset,
        segment_size=segment_size,
        segment_duration=duration,
        seek=0,
    )
    return subsegments


def split_keeping_tail(
    model: WhisperModel, tokenizer: Tokenizer, tokens: list[int], offset: float, segment_size: int, duration: float
) -> list[dict]:
    """`split_by_timestamps`, plus the unfinished last segment it leaves out (from its opening timestamp to the
    clip's end)."""
    subsegments = split_by_timestamps(model, tokenizer, tokens, offset, segment_size, duration)
    used = sum(len(sub["tokens"]) for sub in subsegments)
    rest = tokens[used:]
    if subsegments and any(t < tokenizer.eot for t in rest):  # text tokens after the last timestamp pair
        start = subsegments[-1]["end"]
        if rest[0] >= tokenizer.timestamp_begin:
            start = offset + (rest[0] - tokenizer.timestamp_begin) * model.time_precision
        subsegments.append({"seek": 0, "start": start, "end": max(start, offset + duration), "tokens": rest})
    return subsegments


def silence_level(features: np.ndarray) -> np.floating:
    """The log-mel of silence for a clip whose features are `features`: the feature extractor floors the log
    spectrum at its maximum less 8 and maps x to (x + 4) / 4, so silence is the clip's largest feature less 2 (what
    Whisper's own padding of the audio gives)."""
    return features.max() - 2.0


def silence_padded(features: np.ndarray, chunks_metadata: list[dict], frames: int, fps: float) -> np.ndarray:
    """`features` (batch, mels, 3000) trimmed to `frames`, each clip's frames after its audio set to its
    `silence_level`."""
    out = np.array(features[..., :frames], dtype=np.float32)
    for i, meta in enumerate(chunks_metadata):
        n = min(int(np.ceil(meta["duration"] * fps)), frames)
        if 0 < n < frames:
            out[i, :, n:] = silence_level(out[i, :, :n])
    return out
