"""Every tunable of decoding, in one frozen record: `DecodeOptions`.

Each field has its default and why in one line; docs/engine.md ("Decoding options") has the table and the sections
with the measurements. A model-registry entry picks a preset (`PRESETS`) and may override fields (`decode` in its
JSON, SORI_MODELS_FILE); `with_overrides` validates them and names the field in its error. Benchmarks change options
with `dataclasses.replace`, never by writing module globals. The checks were tuned on Whisper base: a larger model
gets its own thresholds as a preset here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class DecodeOptions:
    # --- windows and chunks (decode/windows.py)
    speech_s: float = 20.0  # longest VAD speech region (Silero's max_speech_duration_s): cut at a pause
    min_silence_ms: int = 2000  # a pause that ends a VAD region: 500 ms packs chunks fuller but costs accuracy
    chunk_s: float = 30.0  # most speech per chunk: Whisper's window, one detection and one encoder pass each
    guard_s: float = 1.0  # a region ending this close to a window's end goes on in the next window
    # --- VAD (vad.py, phone.py)
    vad_threshold: float = 0.5  # Silero threshold for wide-band audio (faster-whisper's default)
    phone_vad_threshold: float = 0.2  # narrow-band audio: Silero scores speech lower there
    vad_pad_ms: int = 400  # speech padding each side of a VAD region
    onset_quiet_frames: int = 16  # 0.5 s under the threshold before a region: its onset is scored again afresh
    onset_lookback_frames: int = 64  # 2 s before a region scored again: Silero catches up within that
    onset_step_frames: int = 12  # a fresh piece every 0.375 s, running twice that
    # --- batched rounds (decode/rounds.py)
    batch_size: int = 4  # chunks decoded together: more costs memory for no CPU gain
    max_rounds: int = 4  # batched passes: the first, then rounds for the speech after an early stop (a repeat each)
    tail_s: float = 0.6  # undecoded speech after a chunk's last segment that is decoded on (VAD padding is 0.4 s)
    longest_word_s: float = 1.5  # a last word timed longer was stretched over speech its text does not hold
    stretched_word_s: float = 0.5  # ... and is cut to end this long after its start (a third of longest_word_s)
    encoder_margin_s: float = 1.0  # audio after a batch's longest clip that the encoder still sees
    encoder_min_s: float = 10.0  # the least audio the encoder sees: shorter windows lost characters
    # --- the sequential re-decode (faster-whisper's temperature fallback)
    fallback_steps: int = 5  # temperatures after 0.0, by 0.2
    sampling_seed: int = 0  # the fallback samples: seeded, the same audio gives the same text in every process
    # --- verdicts (verdicts/per_window.py)
    min_logprob: float = -1.0  # a pass or a segment (rule 4) below this is unsure (faster-whisper's log_prob_threshold)
    no_speech_prob: float = 0.6  # with min_logprob, text on no speech (faster-whisper's no_speech_threshold)
    max_compression: float = 2.4  # text compression ratio above which a result is a loop (faster-whisper's)
    missing_s: float = 3.0  # a clip with this much speech that decoded to no text is suspect
    rest_tokens_per_s: int = 20  # most tokens per second a rest holds (Whisper writes 2-5): more is a loop
    rest_tokens_min: int = 10  # ... and this many more
    replay_min_chars: int = 12  # a replay (earlier text written again) of at least this many characters
    replay_chars_per_s: float = 30.0  # ... written faster than this over the clip's audio
    rest_echo_words: int = 3  # most words of a rest's start dropped as the echo of the text before it
    # --- the speech map and the hallucination stage (verdicts/per_file.py; docs/engine.md, "Hallucination control")
    speech_frame_prob: float = 0.3  # a frame is speech at this Silero probability: 98 % of speech, <1 % of noise
    no_speech_share: float = 0.05  # a segment under which less than this share of the frames is speech is dropped
    loop_repeats: int = 3  # a unit repeated this many times in a row is a loop
    repeat_min_chars: int = 4  # a segment saying its predecessor's text again, this long or more, is a loop (rule 1)
    word_speech_s: float = 0.15  # speech frames a word needs under it to count as said (an invented one has none)
    syllable_speech_s: float = 0.06  # ... and per Hangul syllable, kana or kanji: half of the 0.12 s saying one takes
    letter_speech_s: float = 0.03  # ... and per Latin letter: half of 0.06 s (about 15 letters/s)
    span_margin_s: float = 0.5  # a word span estimated from characters is widened this much each side: off by a word
    tail_carry_s: float = 0.25  # Silero's speech frames run on this long past a word's end: not the next segment's
    # --- language
    top_languages: int = 5  # language_probs entries reported when no candidates restrict detection
    # --- streaming interims (stream_interim.py)
    interim_min_window_s: float = 10.0  # shorter windows (the utterance alone) make Whisper loop
    interim_window_step_s: float = 5.0  # an interim's window grows in these steps
    interim_tokens_per_s: int = 15  # most tokens an interim writes per second of audio: a loop stops there
    interim_tokens_min: int = 10  # ... and this many more: a short utterance's first words
    interim_lead_held_back: int = 1  # words of a first hypothesis held back (twice as many characters unspaced)
    # --- streaming sessions' end-pointing (streaming.py; docs/streaming.md, "How a session works")
    stream_min_speech_frames: int = 5  # 0.16 s of speech frames before an utterance counts as begun (a click does not)
    stream_pad_s: float = 0.4  # audio decoded after an utterance's last speech frame (the VAD's padding)
    stream_lead_frames: int = 25  # 0.8 s before its first: Silero marks a soft onset late on a stream; whole frames
    stream_max_utterance_s: float = 15.0  # a longer utterance is finalised at its longest pause
    stream_idle_keep_s: float = 1.0  # audio kept while there is no speech, so a soft onset keeps its lead-in
    stream_paused_s: float = 0.25  # no interim once the speech has paused this long (the final may be next)
    stream_early_s: float = 0.2  # a final is decoded early once its pause is within this of epd_time


DEFAULT = DecodeOptions()
# One preset per model-registry entry (src/engine/models.ts). Both entries run Whisper base today, so both are the
# defaults; an entry that moves to another model gets its thresholds here.
PRESETS: dict[str, DecodeOptions] = {"sommers": DEFAULT, "whisper": DEFAULT}
FIELDS = {f.name: f for f in dataclasses.fields(DecodeOptions)}


def with_overrides(base: DecodeOptions, overrides: Mapping[str, Any], where: str = "decode") -> DecodeOptions:
    """`base` with `overrides` ({field: value}) applied. Raises ValueError (TypeError for a value that is not a
    number) naming the field for an unknown field, a value of the wrong type (an int field takes a whole number, a
    float field any number), or a value out of its range (not finite; negative where a count, a time or a
    probability is meant)."""
    changes: dict[str, Any] = {}
    for name, value in overrides.items():
        f = FIELDS.get(name)
        if f is None:
            raise ValueError(f"{where}.{name} is not a decoding option (known: {', '.join(FIELDS)})")
        changes[name] = _checked(f"{where}.{name}", f.type, value)
    return dataclasses.replace(base, **changes)


NEGATIVE_OK = frozenset({"min_logprob"})  # a log-probability
POSITIVE = frozenset(  # counts and lengths that cannot be zero
    ("batch_size", "max_rounds", "chunk_s", "speech_s", "encoder_min_s", "onset_step_frames")
    + ("interim_min_window_s", "interim_window_step_s")
)


def _checked(name: str, kind: Any, value: Any) -> Any:
    field = name.rsplit(".", 1)[-1]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number")
    if kind == "int" or kind is int:
        if not float(value).is_integer():
            raise ValueError(f"{name} must be a whole number")
        value = int(value)
    else:
        value = float(value)
        if not math.isfinite(value):
            raise ValueError(f"{name} must be finite")
    if field in POSITIVE and value <= 0:
        raise ValueError(f"{name} must be > 0")
    if field == "loop_repeats" and value < 2:
        raise ValueError(f"{name} must be >= 2")  # a unit said once is no loop
    if value < 0 and field not in NEGATIVE_OK:
        raise ValueError(f"{name} must be >= 0")
    return value


def check(entries: Mapping[str, Any]) -> list[str]:
    """The errors of a registry's `decode` overrides ({entry name: {field: value}}), each naming its field: what the
    service checks at start for SORI_MODELS_FILE (`python -m sori_engine.decode_options JSON`)."""
    errors = []
    for name, overrides in entries.items():
        if name not in PRESETS:
            errors.append(f"{name} is not a registry entry (known: {', '.join(PRESETS)})")
            continue
        try:
            with_overrides(PRESETS[name], overrides, f"{name}.decode")
        except (TypeError, ValueError) as e:
            errors.append(str(e))
    return errors


if __name__ == "__main__":
    import json
    import sys

    problems = check(json.loads(sys.argv[1]))
    print("\n".join(problems))
    sys.exit(1 if problems else 0)
