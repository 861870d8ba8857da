"""The `transcribe` operation: stream-decode → windowed VAD → language → batched faster-whisper → protocol segments.

Memory is bounded whatever the file's length: the decoder yields blocks (audio.stream), which are gathered into
windows of WINDOW_S; the Silero VAD runs on one window at a time, and speech regions that may run on past the
window's end are carried into the next window instead of being cut. Only a window (about 20 MB of float32) and its
speech are in memory at once, so a 4-hour file costs what a 5-minute one does.

Each window's speech regions are merged into chunks of at most 30 s of speech (Whisper's window: the encoder costs
the same for a full window as for 2 s of speech, so full chunks mean fewer encoder passes) and the chunks are
decoded in batches with faster-whisper's BatchedInferencePipeline (one batched beam search for up to BATCH_SIZE
chunks; on CPU each chunk's encoder pass runs alone, in a window of its own length, fw_batched.encode_clip_by_clip). A
batched pass has no seek loop, so two things WhisperModel.transcribe's loop does are done here: the unfinished last
segment of a chunk is kept (fw_batched.KeepTailPipeline), and the speech after the point where a chunk's decoding
stopped is decoded on in a further batched round (_decode_batched). Segment times are mapped back to file time with
faster-whisper's own `restore_speech_timestamps`, as `vad_filter=True` does. Figures: docs/audio.md,
docs/performance.md.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace

import ctranslate2
import numpy as np
from faster_whisper import WhisperModel
from faster_whisper.audio import pad_or_trim
from faster_whisper.transcribe import Segment as FwSegment
from faster_whisper.transcribe import restore_speech_timestamps

from . import audio as audio_io
from . import checkpoint, hallucination, models, phone, rest_echo, vad
from .fw_batched import KeepTailPipeline, encoder_frames, seek_of_clip
from .protocol import EngineError, ProbeResult, Segment, TranscribeParams, TranscribeResult, Word, bad_request

log = logging.getLogger(__name__)

SR = audio_io.SAMPLE_RATE
CHUNK_S = 30.0  # Whisper's window: a chunk is at most one window, so one detection and one decode cover all of it
SPEECH_S = 20.0  # longest VAD speech region (Silero's max_speech_duration_s): longer speech is cut at a pause
# A pause that ends a VAD speech region (Silero's default). 500 ms packs chunks fuller (6 encoder passes instead
# of 8 on bench/rtf.py's ko input) but more cuts cost accuracy there (CER 0.119 against 0.097).
MIN_SILENCE_MS = 2000
CHUNK_SPEECH_S = CHUNK_S  # most speech per chunk: one encoder pass each, which costs the same however full
WINDOW_S = checkpoint.DEFAULT_WINDOW_S  # audio held for the VAD at once (19 MB of float32); SORI_ENGINE_WINDOW_S
GUARD_S = 1.0  # speech regions ending this close to a window's end may go on in the next window: carried over
BATCH_SIZE = 4  # chunks decoded together: more costs memory (8 with beam 5: ~1.1 GB) for no CPU gain; docs/audio.md
MISSING_S = 3.0  # speech in a clip that decoded to no text at all: suspect
MAX_COMPRESSION = 2.4  # text compression ratio above which a result is a repetition loop (faster-whisper's threshold)
# faster-whisper's own gates, also for the sequential re-decode (its temperature fallback: 0.0 then up by 0.2 to 1.0,
# FALLBACK_STEPS of them after the first): a pass below MIN_LOGPROB is retried hotter; text with a no-speech
# probability above NO_SPEECH_PROB and a log-probability below MIN_LOGPROB is dropped. Measured on narrow-band audio
# in docs/models.md ("Phone audio: decoding settings").
MIN_LOGPROB = -1.0
NO_SPEECH_PROB = 0.6
FALLBACK_STEPS = 5
# The fallback's passes above temperature 0 sample from CTranslate2's random generator. Seeded before each re-decode,
# the same audio gives the same transcript on every run and in every process (unseeded, AMR-NB
# ko/deeply_dancestudio_sub100110a00036 came back as one of two texts, 15 or 17 edits, from run to run).
SAMPLING_SEED = 0
TAIL_S = 0.6  # undecoded speech after a clip's last segment that is decoded on (VAD padding alone is 0.4 s)
LONGEST_WORD_S = 1.5  # a word timed longer was stretched by alignment over speech the text does not hold
# Most tokens a rest (the speech after an early stop) can hold: Whisper writes 2-5 tokens per second of speech,
# timestamps included (bench/rtf.py's chunks), so 20 per second and 10 more leave room for the fastest speech. A
# rest decoded that far is a repetition loop: its decode is stopped there and it is dropped (seen: "아, 아, 아, ..."
# to 224 tokens, the most a decode gives, on a rest of ko26 at beam 1: 2 of the job's 15 CPU s; docs/performance.md).
REST_TOKENS_PER_S = 20
REST_TOKENS_MIN = 10
# A replay: a run of consecutive segments that only says again what the clip said before it, at least
# REPLAY_MIN_CHARS characters of text (normalized), written faster than REPLAY_CHARS_PER_S over the clip's audio. The
# model lost its place and wrote earlier text again over audio that cannot hold it (ko26 laid out with 1 s of room
# tone, beam 5: a clip's last three sentences, 30 characters, again over the 0.3 s of the clip after them, at
# log-probability -0.51). A person repeating a greeting ("여보세요?") stays under the length, and speech said again
# at a speaking pace (a hold message, a recording played twice in one chunk) under the rate: Korean and Japanese
# speech is 5-10 characters a second, English 10-20 letters.
REPLAY_MIN_CHARS = 12
REPLAY_CHARS_PER_S = 30.0
MAX_ROUNDS = 2  # batched passes per set of chunks: the first and one continuation (a third mostly decoded <1 s rests)
PROGRESS_INTERVAL_S = 1.0
TOP_LANGUAGES = 5  # language_probs entries reported when no candidates restrict detection

Region = dict  # {"start": sample, "end": sample}, the shape faster-whisper's VAD helpers use


@dataclass
class ProgressReporter:
    """Turns positions in the file into progress events, at most one per PROGRESS_INTERVAL_S of wall time, so a
    fast transcription of a long file does not flood the pipe. duration_s is the expected length (container or
    measured); positions past it count as 1.0."""

    emit: Callable[[float], None]
    duration_s: float | None
    last_emit: float = field(default_factory=time.monotonic)
    fraction: float = 0.0

    def update(self, position_s: float) -> None:
        if not self.duration_s or self.duration_s <= 0:
            return
        self.fraction = max(self.fraction, min(position_s / self.duration_s, 1.0))
        now = time.monotonic()
        if now - self.last_emit >= PROGRESS_INTERVAL_S:
            self.last_emit = now
            self.emit(self.fraction)


@dataclass
class Window:
    """A stretch of the file held for the VAD: `audio` starts at sample `offset` of the file."""

    offset: int
    audio: np.ndarray
    regions: list[Region]  # final speech regions, in window samples
    probs: np.ndarray  # Silero's speech probability of each 32 ms frame of `audio` (the hallucination stage's map)


def transcribe(
    req: TranscribeParams,
    emit_progress: Callable[[float], None],
    emit_checkpoint: Callable[[dict], None] | None = None,
) -> TranscribeResult:
    model = models.get_model(req.model)
    _check_languages(req, model.supported_languages)
    info = _probe(req.audio_path)
    expected_s = _expected_duration(req, info)
    blocks = audio_io.stream(req.audio_path, req.max_duration_s, req.channel)
    narrowband = phone.narrowband_container(info)
    return _transcribe_blocks(model, req, blocks, narrowband, expected_s, emit_progress, emit_checkpoint)


def transcribe_audio(
    req: TranscribeParams,
    audio: np.ndarray,
    narrowband: bool,
    window_s: float | None = None,
    speech_probs: np.ndarray | None = None,
) -> TranscribeResult:
    """The same recognition as `transcribe` on 16 kHz float32 audio already in memory (a streaming session's
    utterance, streaming.py): same VAD, decoding, tail rounds and hallucination stage. `req.audio_path` is unused.
    `window_s` (at least the audio's length) shortens Whisper's 30 s window to that: see KeepTailPipeline.
    `speech_probs`: Silero's probability for each 32 ms frame of `audio` from a pass that also saw the audio
    before it (the session's), used instead of a pass over `audio` alone: scored from its first sample, soft
    reverberant speech fell under the speech map's threshold and a real sentence was removed as "on no speech"."""
    model = models.get_model(req.model)
    _check_languages(req, model.supported_languages)
    frames = (
        None
        if window_s is None
        else round(window_s * model.feature_extractor.sampling_rate / model.feature_extractor.hop_length)
    )
    return _transcribe_blocks(
        model,
        req,
        [audio],
        narrowband,
        audio.shape[0] / SR,
        lambda _f: None,
        window_frames=frames,
        known_probs=speech_probs,
    )


def _transcribe_blocks(
    model: WhisperModel,
    req: TranscribeParams,
    blocks: Iterable[np.ndarray],
    narrowband: bool,
    expected_s: float | None,
    emit_progress: Callable[[float], None],
    emit_checkpoint: Callable[[dict], None] | None = None,
    window_frames: int | None = None,
    known_probs: np.ndarray | None = None,
) -> TranscribeResult:
    progress = ProgressReporter(emit_progress, expected_s)
    state = _Decoder(model, req, progress, window_frames)
    use_vad = req.model.vad or req.language_mode == "multi"
    window_s = checkpoint.window_s()
    ckey = checkpoint.key(req, window_s)
    speech = hallucination.SpeechMapBuilder()  # Silero's speech probabilities, for the hallucination stage
    index = 0  # windows done, here or in the requests whose checkpoints this one resumes from
    resumed = checkpoint.restore(req.resume_from, ckey)
    if resumed is not None:
        state.restore(resumed)
        for offset, part in resumed.speech:
            speech.add_probs(offset, part)
        index = resumed.count
        blocks = skip_to(blocks, resumed.offset_sample)
        progress.update(resumed.offset_sample / SR)
        log.info("resuming after %d window(s), at %.1f s", index, resumed.offset_sample / SR)
    start = resumed.offset_sample if resumed is not None else 0
    for window in windows(
        blocks, use_vad, window_s, narrowband=narrowband, start_sample=start, known_probs=known_probs
    ):
        done = len(state.segments)
        speech.add_probs(window.offset, window.probs)
        state.feed(window)
        if emit_checkpoint is not None:
            emit_checkpoint(
                checkpoint.make(
                    index,
                    ckey,
                    window.offset,
                    window.offset + window.audio.shape[0],
                    window.probs,
                    state.segments[done:],
                    state.language,
                    state.probs,
                    state.weighted,
                )
            )
        index += 1
    duration_s = state.total_samples / SR
    language, probs = state.finish()
    # Per-chunk decoding can in rare cases emit a segment that starts before its predecessor; keep time order.
    segments = sorted((_clip_segment(s, duration_s) for s in state.segments), key=lambda s: s.start)
    segments = hallucination.clean(segments, speech.build())
    return TranscribeResult(duration_s=duration_s, language=language, language_probs=probs, segments=segments)


def _probe(path: str) -> ProbeResult | None:
    try:
        return audio_io.probe(path)
    except EngineError:
        return None  # let the decoder give the precise error


def _expected_duration(req: TranscribeParams, info: ProbeResult | None) -> float | None:
    """The container's duration when it can be trusted to be within the limit; else the decoded length, measured
    in a decode-only pass (cheap next to recognition), so that an over-long file fails before any recognition
    work and progress has a denominator. A container that understates its length is caught while streaming."""
    declared = info.duration_s if info is not None else None
    if declared is not None and declared > 0 and (req.max_duration_s is None or declared <= req.max_duration_s):
        return declared
    return audio_io.measure(req.audio_path, req.max_duration_s)


def skip_to(blocks: Iterable[np.ndarray], sample: int) -> Iterator[np.ndarray]:
    """The decoded blocks from file sample `sample` on: whole blocks before it are dropped and the one it falls in
    is cut there. Resuming at a window's start, the first block is then exactly the audio the uninterrupted run
    carried over from the previous window, and the later blocks are the same blocks, so the windows that follow are
    the same windows (checkpoint.py)."""
    seen = 0
    for block in blocks:
        end = seen + block.shape[0]
        if end > sample:
            yield block if seen >= sample else block[sample - seen :]
        seen = end


def windows(
    blocks: Iterable[np.ndarray],
    use_vad: bool,
    window_s: float = WINDOW_S,
    narrowband: bool = False,
    start_sample: int = 0,
    known_probs: np.ndarray | None = None,
) -> Iterator[Window]:
    """Group decoded blocks into windows and find their speech. A region that may continue past a window's end
    (it ends within GUARD_S of it) is not final: the audio from its start is carried into the next window, so no
    region is ever cut by a window boundary. Without VAD every window is cut into plain CHUNK_S regions.
    Narrow-band audio (`narrowband`: the container says so) gets the phone VAD threshold (phone.py). One Silero
    pass gives both a window's regions and its speech probabilities (vad.py), the frames before each onset scored
    again from a fresh state (vad.rescore_onsets). `known_probs`: the probabilities of
    the audio from `start_sample` on, already computed (transcribe_audio), for the first window."""
    window_samples = int(window_s * SR)
    guard = int(GUARD_S * SR)
    pending: list[np.ndarray] = []
    pending_len = 0
    offset = start_sample  # file sample where the pending audio starts (`blocks` start there)
    exhausted = False
    it = iter(blocks)
    while not exhausted:
        for block in it:
            pending.append(block)
            pending_len += block.shape[0]
            if pending_len >= window_samples:
                break
        else:
            exhausted = True
        if pending_len == 0:
            return
        buf = np.concatenate(pending) if len(pending) > 1 else pending[0]
        pending, pending_len = [], 0
        options = phone.vad_options(narrowband, SPEECH_S, MIN_SILENCE_MS)
        if known_probs is not None and offset == start_sample and known_probs.size:
            n = -(-buf.shape[0] // vad.FRAME)  # the frames of buf, the last one padded, as vad.probabilities has them
            probs = np.pad(known_probs[:n], (0, max(0, n - known_probs.shape[0])), mode="edge")
        else:
            probs = vad.probabilities(buf)
            if use_vad:  # onsets scored again from a fresh state (vad.rescore_onsets); a session's probs are its own
                probs = vad.rescore_onsets(buf, probs, options.threshold)
        if not use_vad:
            step = int(CHUNK_S * SR)
            cut = buf.shape[0] if exhausted else buf.shape[0] - buf.shape[0] % step
            regions = [{"start": s, "end": min(s + step, cut)} for s in range(0, cut, step)]
        else:
            regions = vad.regions(probs, options, buf.shape[0])
            if exhausted:
                cut = buf.shape[0]
            else:
                limit = buf.shape[0] - guard
                open_regions = [r for r in regions if r["end"] > limit]
                regions = [r for r in regions if r["end"] <= limit]
                cut = open_regions[0]["start"] if open_regions else limit
                if cut <= 0:  # cannot happen with WINDOW_S > CHUNK_S + GUARD_S; keep going rather than loop
                    cut, regions = buf.shape[0], regions + open_regions
        # The frames of the audio kept (the carried rest is scored again with the next window); the last one may
        # also hold samples after the cut, which the hallucination stage's 32 ms resolution cannot tell apart.
        yield Window(offset=offset, audio=buf[:cut], regions=regions, probs=probs[: -(-cut // vad.FRAME)])
        if cut < buf.shape[0]:
            pending, pending_len = [buf[cut:].copy()], buf.shape[0] - cut
        offset += cut


class _Decoder:
    """Consumes windows: picks each chunk's language and decodes the chunks in batches."""

    def __init__(
        self, model: WhisperModel, req: TranscribeParams, progress: ProgressReporter, window_frames: int | None = None
    ) -> None:
        self.model = model
        self.window_frames = window_frames  # KeepTailPipeline's: None for Whisper's full window
        self.req = req
        self.progress = progress
        self.segments: list[Segment] = []
        self.total_samples = 0
        self.head: np.ndarray | None = None  # the file's first 30 s, to detect on when no speech is found
        self.language: str | None = req.language if req.language_mode == "fixed" else None
        self.probs: dict[str, float] | None = {req.language: 1.0} if req.language else None
        self.weighted: dict[str, float] = {}  # multi: speech-weighted sum of the chunks' distributions
        self.resumed = False  # the first windows were decoded by an earlier request (checkpoint.py)

    def restore(self, r: checkpoint.Restored) -> None:
        self.segments = list(r.segments)
        self.total_samples = r.total_samples
        self.language = r.language
        self.probs = r.probs
        self.weighted = dict(r.weighted)
        self.resumed = True

    def feed(self, window: Window) -> None:
        if self.head is None and not self.resumed:
            self.head = window.audio[: int(CHUNK_S * SR)].copy()
        self.total_samples = window.offset + window.audio.shape[0]
        chunks = _group(window.regions, int(CHUNK_SPEECH_S * SR))
        speech_map = hallucination.SpeechMap(window.probs)  # window time, as the decoded segments
        by_language: dict[str, list[list[Region]]] = {}
        for chunk in chunks:
            by_language.setdefault(self._language_of(window.audio, chunk), []).append(chunk)

        def reached(sample: int) -> None:  # progress within the window, batch by batch
            self.progress.update((window.offset + sample) / SR)

        for language, lang_chunks in by_language.items():
            for fw in _decode_batched(
                self.model, window.audio, lang_chunks, language, self.req, reached, self.window_frames, speech_map
            ):
                segment = _to_segment(fw, language, self.req.word_timestamps, window.offset / SR)
                if segment is not None:
                    self.segments.append(segment)
                    self.progress.update(segment.end)
        self.progress.update(self.total_samples / SR)

    def _language_of(self, audio: np.ndarray, chunk: list[Region]) -> str:
        mode = self.req.language_mode
        if mode == "fixed":
            assert self.language is not None  # parse_transcribe requires it
            return self.language
        if mode == "detect":
            if self.language is None:  # the first 30 s of speech decide for the whole file
                self.probs = _detect(self.model, _cut(audio, chunk), self.req.language_candidates)
                self.language = max(self.probs, key=self.probs.__getitem__)
            return self.language
        samples = _cut(audio, chunk)
        chunk_probs = _detect(self.model, samples, self.req.language_candidates)
        for code, p in chunk_probs.items():
            self.weighted[code] = self.weighted.get(code, 0.0) + p * samples.size
        return max(chunk_probs, key=chunk_probs.__getitem__)

    def finish(self) -> tuple[str, dict[str, float]]:
        if self.req.language_mode == "multi" and self.weighted:
            # File-level language: the speech-duration-weighted mean of the chunk distributions.
            total = sum(self.weighted.values())
            probs = {code: w / total for code, w in sorted(self.weighted.items(), key=lambda kv: -kv[1])}
            if not self.req.language_candidates:
                probs = dict(list(probs.items())[:TOP_LANGUAGES])
            return max(probs, key=probs.__getitem__), probs
        if self.probs is None:  # detect/multi and no speech anywhere: listen to the start of the file
            log.info("no speech found in %s", self.req.audio_path)
            head = self.head if self.head is not None else self._file_head()
            self.probs = _detect(self.model, head, self.req.language_candidates)
        language = self.language or max(self.probs, key=self.probs.__getitem__)
        return language, self.probs

    def _file_head(self) -> np.ndarray:
        """The file's first CHUNK_S of audio, decoded again: a resumed request did not see the first window."""
        if not self.resumed:
            return np.zeros(0, dtype=np.float32)
        want = int(CHUNK_S * SR)
        got: list[np.ndarray] = []
        size = 0
        for block in audio_io.stream(self.req.audio_path, self.req.max_duration_s, self.req.channel):
            got.append(block)
            size += block.shape[0]
            if size >= want:
                break
        return np.concatenate(got)[:want] if got else np.zeros(0, dtype=np.float32)


def _check_languages(req: TranscribeParams, supported: list[str]) -> None:
    codes = list(req.language_candidates or [])
    if req.language_mode == "fixed" and req.language:
        codes.append(req.language)
    unknown = [c for c in codes if c not in supported]
    if unknown:
        raise bad_request(f"unsupported language code(s) for this model: {', '.join(unknown)}")


def _group(regions: list[Region], max_samples: int) -> list[list[Region]]:
    """Merge consecutive speech regions into chunks of at most max_samples of speech (regions are already capped
    at that length by the VAD's max_speech_duration_s). Two chunks decoded apart lose the words at their seam when
    it falls inside speech, so a chunk that would end where two regions touch (a pause under the VAD's padding, or a
    cut the VAD made in long speech) ends instead at its last real gap, if that leaves it a third full or more."""
    groups: list[list[Region]] = []
    current: list[Region] = []
    size = 0
    for region in regions:
        length = region["end"] - region["start"]
        if length <= 0:
            continue
        if current and size + length > max_samples:
            keep = _last_gap(current, max_samples // 3) if current[-1]["end"] >= region["start"] else None
            carry = current[keep:] if keep is not None else []
            size = _samples(carry)
            if size + length > max_samples:
                carry, size = [], 0
            groups.append(current[: len(current) - len(carry)])
            current = carry
        current.append(region)
        size += length
    if current:
        groups.append(current)
    return groups


def _last_gap(chunk: list[Region], min_before: int) -> int | None:
    """The index of the last region of `chunk` that follows a gap (its start after the previous one's end) with at
    least `min_before` samples of speech before it."""
    before = _samples(chunk)
    for k in range(len(chunk) - 1, 0, -1):
        before -= chunk[k]["end"] - chunk[k]["start"]
        if chunk[k - 1]["end"] < chunk[k]["start"] and before >= min_before:
            return k
    return None


def _samples(regions: list[Region]) -> int:
    """Samples of speech in `regions`."""
    return sum(r["end"] - r["start"] for r in regions)


def _cut(audio: np.ndarray, regions: list[Region]) -> np.ndarray:
    if not regions:
        return audio[:0]
    if len(regions) == 1:
        return audio[regions[0]["start"] : regions[0]["end"]]  # a view, no copy
    return np.concatenate([audio[r["start"] : r["end"]] for r in regions])


def _detect(model: WhisperModel, audio: np.ndarray, candidates: tuple[str, ...] | None) -> dict[str, float]:
    """Language probabilities from the first 30 s window of `audio`.

    WhisperModel.detect_language is not used because for 30 s or more of input its feature extractor yields one
    frame more than a window, and when the first window is not confident it reports the probabilities of that
    near-empty second window.
    """
    fe = model.feature_extractor
    features = fe(audio[: fe.n_samples])[..., : fe.nb_max_frames]
    encoder_output = model.encode(pad_or_trim(features))
    results = model.model.detect_language(encoder_output)[0]  # [("<|en|>", p), ...], highest first
    probs = {token[2:-2]: float(p) for token, p in results}
    if not candidates:
        return dict(list(probs.items())[:TOP_LANGUAGES])
    restricted = {code: probs.get(code, 0.0) for code in candidates}
    total = sum(restricted.values())
    if total <= 0:
        return {code: 1.0 / len(candidates) for code in candidates}
    return {code: p / total for code, p in restricted.items()}


def _decode_batched(
    model: WhisperModel,
    audio: np.ndarray,
    chunks: list[list[Region]],
    language: str,
    req: TranscribeParams,
    reached: Callable[[int], None] = lambda _sample: None,
    window_frames: int | None = None,
    speech_map: hallucination.SpeechMap | None = None,
) -> list[FwSegment]:
    """Decode `chunks` (lists of speech regions of `audio`, at most CHUNK_SPEECH_S of speech each); returns
    faster-whisper segments in window time.

    A batched decode is a single greedy/beam pass per chunk at temperature 0, whereas WhisperModel.transcribe seeks
    on from the last timestamp after an early end-of-text. So, as its seek loop does, the speech of a chunk after
    its last decoded segment (when at least TAIL_S of it is left) is decoded on in another batched round. Each
    tail stays a chunk of its own: packing the tails of different chunks into one clip would let a segment run
    from one tail into another, far away in time, which cannot be mapped back (measured: text out of order)."""
    out: list[FwSegment] = []
    before: list[FwSegment | None] = [None] * len(chunks)  # a rest's text before it: its chunk's last segment
    for round_ in range(MAX_ROUNDS):
        tails: list[list[Region]] = []
        lasts: list[FwSegment | None] = []
        for chunk, last, segs in zip(
            chunks,
            before,
            _decode_once(model, audio, chunks, language, req, reached, round_ > 0, window_frames, speech_map),
            strict=True,
        ):
            segs = rest_echo.without_echo(segs, last) if last else segs
            out.extend(segs)
            said = [fw for fw in segs if fw.text.strip()]
            if not said:  # nothing recognizable in it: decoding it again would only repeat that
                continue
            rest = _after(chunk, int(_cut_stretched_tail(max(said, key=lambda fw: fw.end)) * SR))
            if sum(r["end"] - r["start"] for r in rest) >= TAIL_S * SR and _holds_a_word(audio, rest):
                tails.append(rest)
                lasts.append(max(said, key=lambda fw: fw.end))
        if not tails or round_ + 1 == MAX_ROUNDS:
            break
        chunks, before = tails, lasts
    out.sort(key=lambda fw: fw.start)
    return out


def _cut_stretched_tail(fw: FwSegment) -> float:
    """Where the speech a segment's text says ends: its end, or, when its last word is timed longer than any word is
    said (LONGEST_WORD_S), that word's start, the segment then cut to end shortly after it. Whisper can end a chunk's text early, mid-sentence,
    when its speech runs to the end of the window ("...so they're not really the sort of", the last 6 s of a meeting
    excerpt not written); the segment still ends at the chunk's end and word alignment stretches its last word over
    the speech it did not write. Measured from that word's start, that speech is decoded on like any rest (whose
    first word, said again, rest_echo drops); the segment and its word then end there."""
    words = [w for w in fw.words or () if w.word.strip()]
    if not words or words[-1].end - words[-1].start <= LONGEST_WORD_S:
        return fw.end
    last = words[-1]
    fw.end = last.end = last.start + LONGEST_WORD_S / 3
    return last.start


def _holds_a_word(audio: np.ndarray, rest: list[Region]) -> bool:
    """Whether the speech after a chunk's last segment has a word's worth of speech frames of its own. The VAD's
    regions carry padding and the last word's hang-over; decoded on, 1.2 s holding 0.06 s of speech gave a
    confident invented `さっきは、` after ja/common_voice_ja_38852485 (docs/engine.md)."""
    return hallucination.own_speech_s(_cut(audio, rest)) >= hallucination.MIN_WORD_SPEECH_S


def _after(chunk: list[Region], sample: int) -> list[Region]:
    """The part of a chunk's speech regions after `sample` (window samples)."""
    return [{"start": max(r["start"], sample), "end": r["end"]} for r in chunk if r["end"] > sample]


def _decode_once(
    model: WhisperModel,
    audio: np.ndarray,
    chunks: list[list[Region]],
    language: str,
    req: TranscribeParams,
    reached: Callable[[int], None],
    rests: bool,
    window_frames: int | None = None,
    speech_map: hallucination.SpeechMap | None = None,
) -> list[list[FwSegment]]:
    """One batched pass over `chunks`: each chunk's speech regions are laid end to end as one clip; returns the
    segments of each chunk in window time. A chunk whose result looks wrong (see _suspect) is decoded again alone
    (_decode_again: in its own window, then with WhisperModel.transcribe, which retries at higher temperatures); for
    `rests` (the speech after an early stop, often a second or two) that would cost a full window each, so only their
    repetition loops (and rests decoded to their token limit, _rest_tokens) are dropped.
    `reached(sample)` is told, as each batch's results come in, the window sample up to which the audio has been
    decoded (for progress). A rest that loops over MISSING_S or more of speech is decoded again sequentially, with
    the temperature fallback, rather than dropped: a loop there says the decoder lost its place, not that the audio
    holds no speech (a run of backchannels in a meeting looped twice, and 8 s of it were lost). Segment times are
    kept inside their chunk's speech (_within); with `speech_map` (the
    window's Silero probabilities), a segment timed past its chunk's end with no word's speech left for it is
    dropped (_without_text_past_end)."""
    regions = [r for chunk in chunks for r in chunk]
    speech = _cut(audio, regions)
    clips: list[tuple[float, float]] = []
    pos = 0
    for chunk in chunks:
        size = sum(r["end"] - r["start"] for r in chunk)
        clips.append((pos / SR, (pos + size) / SR))
        pos += size
    cap = _rest_tokens(max(b - a for a, b in clips), model) if rests else None
    batched = _decode_clips(model, window_frames, speech, clips, language, req, 2 * cap if cap else None)
    per_clip: list[list[FwSegment]] = [[] for _ in clips]
    # A segment goes to the clip the pipeline decoded it in, found by the `seek` it carries: that clip's start in
    # feature frames, computed here as the pipeline computes it. Not by its times: a clip's first segment starts at
    # the clip's start rounded to 3 decimals, which can fall just before it (then both clips' text came out twice),
    # and a last segment can run past its clip's end (Whisper's last timestamp may point into the padding), so
    # that its middle fell into the next clip and its text was placed there, seconds away (bench/rtf.py's ko
    # input). Nor by comparing `seek` with the starts: a clip starting on a frame boundary (74.32 s) has seek 7431
    # by float rounding, and its segments went to the clip before (bench/rtf.py's en input, its text twice).
    clip_of = {seek_of_clip(a, model.frames_per_second): i for i, (a, _b) in enumerate(clips)}
    for fw in batched:  # a generator: each batch is decoded when its first segment is asked for
        i = clip_of[fw.seek]
        per_clip[i].append(fw)
        last = min(len(chunks), (i // BATCH_SIZE + 1) * BATCH_SIZE) - 1
        reached(chunks[last][-1]["end"])  # a segment of clip i: its whole batch is decoded
    out: list[list[FwSegment]] = []
    for i, (chunk, (a, b), segs) in enumerate(zip(chunks, clips, per_clip, strict=True)):
        if rests:  # the speech after an early stop: keep what it gave, bar loops and text made up from silence
            ran_to_cap = cap is not None and sum(len(fw.tokens) for fw in segs) >= cap  # all its tokens
            looped = ran_to_cap or any(fw.compression_ratio > MAX_COMPRESSION for fw in segs)
            clip = speech[int(a * SR) : int(b * SR)]
            if looped and hallucination.own_speech_s(clip) >= MISSING_S:
                segs = [fw for fw in _decode_sequential(model, clip, language, req) if not _hallucinated(fw)]
            else:
                segs = [] if ran_to_cap else [_shift(fw, -a) for fw in segs if not _hallucinated(fw)]
        elif _suspect(segs, a, b):
            kept = _before_loop(segs, b)  # the speech after a kept part is decoded on in the next round
            batch = clips[i // BATCH_SIZE * BATCH_SIZE : (i // BATCH_SIZE + 1) * BATCH_SIZE]
            segs = (
                [_shift(fw, -a) for fw in kept]
                if kept
                else _decode_again(model, speech[int(a * SR) : int(b * SR)], language, req, window_frames, batch)
            )
        else:
            segs = [_shift(fw, -a) for fw in segs]
        overran = [fw.end > b - a for fw in segs]
        segs = [_within(fw, b - a) for fw in segs]
        mapped = list(restore_speech_timestamps(segs, chunk, SR))  # chunk time -> window time
        out.append(_without_text_past_end(mapped, overran, speech_map) if speech_map is not None else mapped)
    return out


def _decode_clips(
    model: WhisperModel,
    window_frames: int | None,
    audio: np.ndarray,
    clips: list[tuple[float, float]],
    language: str,
    req: TranscribeParams,
    max_new_tokens: int | None = None,
) -> Iterable[FwSegment]:
    """The batched pipeline over `clips` ((start, end) seconds of `audio`), BATCH_SIZE at a time, in an encoder
    window of `window_frames` (None: each batch's longest clip's, fw_batched.encoder_frames), each clip decoded to
    at most `max_new_tokens` (None: Whisper's limit). A generator: each batch is decoded when its first segment is
    asked for."""
    segments, _info = KeepTailPipeline(model, window_frames).transcribe(
        audio,
        language=language,
        task="transcribe",
        beam_size=req.model.beam_size,
        word_timestamps=req.word_timestamps,
        initial_prompt=req.initial_prompt,
        hotwords=req.hotwords,
        clip_timestamps=[{"start": a, "end": b} for a, b in clips],  # our chunks; its own VAD is not run
        without_timestamps=False,  # timestamp tokens split a chunk into sentence-sized segments
        batch_size=BATCH_SIZE,
        max_new_tokens=max_new_tokens,
    )
    return segments


def _rest_tokens(duration_s: float, model: WhisperModel) -> int | None:
    """The most tokens rests of up to `duration_s` of speech can hold (REST_TOKENS_PER_S), None where that is more
    than a decode can be capped at. The cap passed as `max_new_tokens` is twice that: CTranslate2 4.8's Whisper
    stops at half of the prompt and `max_new_tokens` together (a cap of 100 gave 51 tokens at beam 1 and 5), so a
    loop ends just past the limit, and one that ran the whole cap would be over it too. At most half of Whisper's
    448 tokens, which leaves the prompt (hotwords, initial prompt: at most half too) its room."""
    limit = math.ceil(REST_TOKENS_PER_S * duration_s) + REST_TOKENS_MIN
    return limit if 2 * limit <= model.max_length // 2 else None


def _suspect(segments: list[FwSegment], start_s: float, end_s: float) -> bool:
    """A batched clip result worth a second decode (_decode_again): nothing at all from a clip with speech, a
    repetition loop, or a low-confidence pass (the thresholds WhisperModel.transcribe uses for its temperature
    fallback). Speech left after the last segment is not a reason: it is decoded on in the next round."""
    texts = [fw for fw in segments if fw.text.strip()]
    if not texts:
        return end_s - start_s >= MISSING_S
    return (
        any(fw.compression_ratio > MAX_COMPRESSION or fw.avg_logprob < MIN_LOGPROB for fw in texts)
        or _replay_start(texts, end_s) is not None
    )


def _replay_start(segments: list[FwSegment], end_s: float) -> int | None:
    """The index of the first segment of a replay (REPLAY_*): a run of consecutive segments each of whose text
    (normalized) is already in the text before the run, REPLAY_MIN_CHARS or more in all, over less of the clip's
    audio (up to `end_s`) than REPLAY_CHARS_PER_S allows; None when there is none. Each segment alone may be short
    ("와 진짜 용라운" again, then the next two sentences again as one segment)."""
    said = [hallucination.normalize(fw.text) for fw in segments]
    k = 0
    while k < len(said):
        before = "".join(said[:k])
        end = k
        while end < len(said) and said[end] and said[end] in before:
            end += 1
        chars = sum(len(t) for t in said[k:end])
        if chars >= REPLAY_MIN_CHARS:
            span = min(segments[end - 1].end, end_s) - segments[k].start
            if chars > REPLAY_CHARS_PER_S * max(span, 0.0):
                return k
        k = max(end, k + 1)
    return None


def _before_loop(segments: list[FwSegment], end_s: float) -> list[FwSegment]:
    """What of a confident pass is kept when a repetition loop starts in it: the segments before the loop (a segment
    over MAX_COMPRESSION, one that says again a sentence an earlier one said, or the first of a replay:
    _replay_start), and, where the decoder found its place again after it, the loop segment and what follows (see
    _recovered_after); none when the pass is not confident or the loop starts at once with nothing new after it.
    `end_s`: the clip's end. A loop is how greedy and beam decoding end a clip they lost their place in: what came
    before it was decoded like any clip's text, and the sequential re-decode of the whole clip can lose it (a second
    sentence written again and again to the clip's end; the re-decode wrote that sentence alone). A repeated short
    text ("Yeah.", "네.") is no sign of a loop: people say it again."""
    texts = [fw for fw in segments if fw.text.strip()]
    if not texts or any(fw.avg_logprob < MIN_LOGPROB for fw in texts):
        return []
    replay = _replay_start(texts, end_s)
    replayed = texts[replay] if replay is not None else None
    seen: set[str] = set()
    for k, fw in enumerate(segments):
        said = hallucination.normalize(fw.text)
        repeated = len(said) >= REPLAY_MIN_CHARS and said in seen
        if fw.compression_ratio > MAX_COMPRESSION or repeated or fw is replayed:
            recovered = _recovered_after(segments, k, seen, replay is not None)
            head = segments[:k] + ([fw] if recovered and fw.compression_ratio > MAX_COMPRESSION else []) + recovered
            return head if any(x.text.strip() for x in head) else []
        seen.add(said)
    return []


def _recovered_after(segments: list[FwSegment], k: int, seen: set[str], replay: bool) -> list[FwSegment]:
    """The segments after loop segment k that show the decoder found its place again: new text (no loop, no sentence
    said before), REPLAY_MIN_CHARS or more of it; none otherwise. Without them the speech after the text before the
    loop is decoded on in the next round; with them that speech already has its text, and dropping it would lose
    real speech (a run of backchannels, "Yeah, yeah, yeah...", then a meeting's next 25 s, all dropped)."""
    if replay:
        return []
    said_before = "".join(seen)
    out: list[FwSegment] = []
    for fw in segments[k + 1 :]:
        said = hallucination.normalize(fw.text)
        if fw.compression_ratio > MAX_COMPRESSION or (len(said) >= REPLAY_MIN_CHARS and said in said_before):
            continue
        out.append(fw)
        said_before += said
    new_chars = sum(len(hallucination.normalize(fw.text)) for fw in out)
    return out if new_chars >= REPLAY_MIN_CHARS else []


def _hallucinated(fw: FwSegment) -> bool:
    """A repetition loop (seen on a 0.6 s rest of breath: "はぁぁぁ..."), or text the model made up from silence
    (seen: "Thank you very much." on 1.1 s after the last word): WhisperModel.transcribe's no-speech rule."""
    return fw.compression_ratio > MAX_COMPRESSION or (
        fw.no_speech_prob > NO_SPEECH_PROB and fw.avg_logprob < MIN_LOGPROB
    )


def _decode_again(
    model: WhisperModel,
    clip: np.ndarray,
    language: str,
    req: TranscribeParams,
    window_frames: int | None,
    batch: list[tuple[float, float]],
) -> list[FwSegment]:
    """A suspect clip decoded again: first alone in its own encoder window, when that is shorter than its batch's
    (the batch's window is its longest clip's), then, if the result still looks wrong, sequentially with the
    temperature fallback. Greedy decoding can stop after a word or two on a clip that decodes well in another
    window (ko26's 17.8 s chunk at beam 1: 11 tokens at log-probability -2.1 in its batch's 29 s window, the whole
    text at -0.6 in its own 19 s one); a pass in the short window costs what its encoder and one clip's decode do,
    where the sequential decode always pays for a 30 s window (docs/performance.md, "A suspect chunk")."""
    duration = clip.shape[0] / SR
    full = model.feature_extractor.nb_max_frames
    own = encoder_frames([duration], full, model)
    if window_frames is None and own < encoder_frames([b - a for a, b in batch], full, model):
        again = list(_decode_clips(model, own, clip, [(0.0, duration)], language, req))
        if not _suspect(again, 0.0, duration):
            return again
    return _decode_sequential(model, clip, language, req)


def _decode_sequential(model: WhisperModel, audio: np.ndarray, language: str, req: TranscribeParams) -> list[FwSegment]:
    ctranslate2.set_random_seed(SAMPLING_SEED)
    segments, _info = model.transcribe(
        audio,
        language=language,
        task="transcribe",
        beam_size=req.model.beam_size,
        # Conditioning on the previous window's text is what makes Whisper loop on a hallucination; without it a
        # bad window stays a bad window.
        condition_on_previous_text=False,
        word_timestamps=req.word_timestamps,
        initial_prompt=req.initial_prompt,
        hotwords=req.hotwords,
        vad_filter=False,  # `audio` is already speech only
        temperature=[round(0.2 * i, 1) for i in range(FALLBACK_STEPS + 1)],
        log_prob_threshold=MIN_LOGPROB,
        no_speech_threshold=NO_SPEECH_PROB,
    )
    return list(segments)


def _shift(fw: FwSegment, dt: float) -> FwSegment:
    fw.start += dt
    fw.end += dt
    for w in fw.words or ():
        w.start += dt
        w.end += dt
    return fw


def _within(fw: FwSegment, length_s: float) -> FwSegment:
    """A segment's times (chunk time) kept inside its chunk's speech. Whisper's last timestamp token can point past
    the end of the audio it was given, into the padding of its window; mapped back to window time, such an end lay
    in the silence the VAD cut out or on the next chunk's speech (up to 1.4 s on ko26: "엉무화의료" timed over the
    next clip's "예, 호텔입니다", where the hallucination stage measured that clip's speech as its own)."""
    fw.start = _clip(fw.start, 0.0, length_s)
    fw.end = _clip(fw.end, fw.start, length_s)
    for w in fw.words or ():
        w.start = _clip(w.start, fw.start, fw.end)
        w.end = _clip(w.end, w.start, fw.end)
    return fw


def _without_text_past_end(
    segments: list[FwSegment], overran: list[bool], speech: hallucination.SpeechMap
) -> list[FwSegment]:
    """One chunk's segments (window time, in order) less those that `overran` its end and _said_past_end, each
    measured from the end of the segment before it (its own start for the first)."""
    kept: list[FwSegment] = []
    since = segments[0].start if segments else 0.0
    for fw, past in zip(segments, overran, strict=True):
        if not (past and _said_past_end(fw, min(since, fw.start), speech)):
            kept.append(fw)
        since = fw.end
    return kept


def _said_past_end(fw: FwSegment, since: float, speech: hallucination.SpeechMap) -> bool:
    """Whether a segment Whisper timed past the end of its chunk's audio (window time, clipped to that end) is
    text the model went on writing after the speech: from `since` (the end of the segment before it) to the end
    there is not a word's worth of speech frames (MIN_WORD_SPEECH_S, what a rest needs to be decoded on at all).
    Rule 4 asks this only of unsure segments, but a batched chunk's segments share one avg_logprob, so an invented
    last segment of a confident chunk passed it: ko26 laid out with 1 s of room tone, "...지키는 게 좋지요" then
    "엉무화의료" over the 0.5 s of padding after it, 0.1 s of speech frames there, the hang-over of "좋지요"
    (docs/performance.md). Counted from the segment before, as a word's worth, not less the hang-over (rule 4's
    measure) nor per letter: a real "Thank you." said right after the sentence before it (the diarization clip of
    multi/, without the VAD) is timed from that sentence's end, 0.2 s late, and has 0.32 s of speech frames there,
    0.07 s less the hang-over, and its letters ask 0.24 s, which a timing 0.1 s later would not leave."""
    return speech.seconds(since, fw.end) < hallucination.MIN_WORD_SPEECH_S


def _to_segment(fw: FwSegment, language: str, with_words: bool, offset_s: float) -> Segment | None:
    text = fw.text.strip()
    if not text:
        return None
    start = max(fw.start, 0.0) + offset_s
    end = max(fw.end + offset_s, start)
    words = None
    if with_words:
        words = tuple(
            Word(
                start=_clip(w.start + offset_s, start, end),
                end=_clip(max(w.start, w.end) + offset_s, start, end),
                text=w.word,
                probability=w.probability,
            )
            for w in fw.words or ()
            if w.word.strip()
        )
    return Segment(
        start=start,
        end=end,
        text=text,
        language=language,
        avg_logprob=fw.avg_logprob,
        no_speech_prob=fw.no_speech_prob,
        words=words,
    )


def _clip_segment(seg: Segment, duration_s: float) -> Segment:
    """Whisper's last timestamp token can point past the end of the audio; keep every time inside the file."""
    start = _clip(seg.start, 0.0, duration_s)
    end = _clip(seg.end, start, duration_s)
    if start == seg.start and end == seg.end:
        return seg
    words = None
    if seg.words is not None:
        words = tuple(replace(w, start=_clip(w.start, start, end), end=_clip(w.end, start, end)) for w in seg.words)
    return replace(seg, start=start, end=end, words=words)


def _clip(t: float, lo: float, hi: float) -> float:
    return min(max(t, lo), hi)
