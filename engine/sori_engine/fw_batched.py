"""faster-whisper's batched pipeline with one method copied and changed: the one place sori relies on its internals.

`BatchedInferencePipeline.forward` is not public API. It is copied here from the faster-whisper release named by
FASTER_WHISPER_VERSION, with one change (KeepTailPipeline's docstring). Importing this module fails on any other
release, so an upgrade cannot silently run an old copy against new internals: diff the new upstream forward()
with this one, carry the change over, then move FASTER_WHISPER_VERSION and engine/pyproject.toml's pin together.
"""

from __future__ import annotations

import faster_whisper
import numpy as np
from faster_whisper import BatchedInferencePipeline, WhisperModel
from faster_whisper.tokenizer import Tokenizer
from faster_whisper.transcribe import get_compression_ratio

FASTER_WHISPER_VERSION = "1.2.1"

if faster_whisper.__version__ != FASTER_WHISPER_VERSION:
    raise ImportError(
        f"sori_engine.fw_batched copies BatchedInferencePipeline.forward from faster-whisper {FASTER_WHISPER_VERSION}, "
        f"but {faster_whisper.__version__} is installed: compare the two and update the copy (module docstring)"
    )


class KeepTailPipeline(BatchedInferencePipeline):
    """faster-whisper's batched pipeline, keeping the text after a clip's last timestamp pair.

    WhisperModel._split_segments_by_timestamps drops an unfinished last segment (text after the last pair of
    timestamp tokens, with no closing timestamp) because the sequential seek loop decodes it again from the last
    timestamp. The batched pipeline has no such loop, so upstream those words are lost (the last words of a chunk
    whose speech runs to its end). Here they become a segment that ends at the clip's end.
    forward() is upstream's (FASTER_WHISPER_VERSION) with that one change."""

    def forward(self, features, tokenizer, chunks_metadata, options):  # type: ignore[no-untyped-def]
        encoder_output, outputs = self.generate_segment_batched(features, tokenizer, options)
        segmented_outputs = []
        segment_sizes = []
        for chunk_metadata, output in zip(chunks_metadata, outputs, strict=False):
            duration = chunk_metadata["duration"]
            segment_size = int(np.ceil(duration) * self.model.frames_per_second)
            segment_sizes.append(segment_size)
            subsegments = _split_keeping_tail(
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
                        "seek": int(chunk_metadata["offset"] * self.model.frames_per_second),
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


def _split_keeping_tail(
    model: WhisperModel, tokenizer: Tokenizer, tokens: list[int], offset: float, segment_size: int, duration: float
) -> list[dict]:
    """model._split_segments_by_timestamps, plus the unfinished last segment it leaves out (from its opening
    timestamp to the clip's end)."""
    subsegments, _seek, _single_ending = model._split_segments_by_timestamps(
        tokenizer=tokenizer,
        tokens=tokens,
        time_offset=offset,
        segment_size=segment_size,
        segment_duration=duration,
        seek=0,
    )
    used = sum(len(sub["tokens"]) for sub in subsegments)
    rest = tokens[used:]
    if subsegments and any(t < tokenizer.eot for t in rest):  # text tokens after the last timestamp pair
        start = subsegments[-1]["end"]
        if rest[0] >= tokenizer.timestamp_begin:
            start = offset + (rest[0] - tokenizer.timestamp_begin) * model.time_precision
        subsegments.append({"seek": 0, "start": start, "end": max(start, offset + duration), "tokens": rest})
    return subsegments
