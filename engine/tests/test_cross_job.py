"""The batched decode takes the chunks of several jobs at once (decode.rounds.decode): each job gets the segments it
gets when decoded alone, so batching across jobs on one host is a scheduling change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from sori_engine import audio as audio_io
from sori_engine import hallucination, models, vad
from sori_engine.decode import rounds
from sori_engine.decode.fw import FwSegment, Prompting
from sori_engine.decode.options import DEFAULT
from sori_engine.protocol import ModelConfig

SR = audio_io.SAMPLE_RATE
# Korean clips of 2-7 s: every chunk's encoder window is the least one (10 s) alone and in any batch, so what a
# batch holds does not change the window a chunk is decoded in.
JOBS = [
    ("ko/deeply_anechoic_sub100120a00053.wav", "ko/deeply_anechoic_sub100121a00071.wav"),
    ("ko/deeply_anechoic_sub100120a00213.wav", "ko/deeply_anechoic_sub100121a00083.wav"),
]


def _job(testdata: Path, clips: tuple[str, ...]) -> rounds.Job:
    """The clips laid end to end with 1 s of silence between them, one chunk each."""
    parts, chunks, pos = [], [], 0
    for clip in clips:
        x = audio_io.decode(str(testdata / clip))
        parts += [x, np.zeros(SR, dtype=np.float32)]
        chunks.append([{"start": pos, "end": pos + x.shape[0]}])
        pos += x.shape[0] + SR
    audio = np.concatenate(parts)
    return rounds.Job(audio, chunks, hallucination.SpeechMap(vad.probabilities(audio)))


def _plain(segments: list[FwSegment]) -> list[tuple]:
    return [(fw.start, fw.end, fw.text, fw.avg_logprob) for fw in segments]


def _decoded(testdata: Path, model: dict[str, Any], words: bool) -> tuple[list, list, list[rounds.Job], list]:
    """Each job decoded alone, then both in one batch: (alone, together, the jobs, their progress reports)."""
    settings = rounds.Settings(models.get_model(ModelConfig(**model)), Prompting("ko", 1, words), DEFAULT)
    alone = [rounds.decode(settings, [_job(testdata, clips)])[0] for clips in JOBS]
    reached: list[tuple[int, int]] = []
    jobs = [_job(testdata, clips) for clips in JOBS]
    for j, job in enumerate(jobs):
        job.reached = lambda sample, j=j: reached.append((j, sample))
    together = rounds.decode(settings, jobs)  # the four chunks in one batch
    return alone, together, jobs, reached


def test_two_jobs_in_one_batch_get_what_each_gets_alone(testdata: Path, model: dict[str, Any]) -> None:
    alone, together, jobs, reached = _decoded(testdata, model, words=False)
    assert all(alone)  # each job said something
    assert [_plain(segs) for segs in together] == [_plain(segs) for segs in alone]
    # Each job is told its own progress: the end of its last chunk in the batch.
    assert {j: max(s for k, s in reached if k == j) for j in (0, 1)} == {
        j: job.chunks[-1][-1]["end"] for j, job in enumerate(jobs)
    }


def test_word_times_move_by_a_frame_or_two_in_another_batch(testdata: Path, model: dict[str, Any]) -> None:
    """faster-whisper aligns the words of a whole batch at once and carries the last word's time from one clip to the
    next, so a word's time can move by a 20 ms frame or two with what else the batch holds (as it does within one
    job's batches); the text and its confidence do not."""
    alone, together, _jobs, _reached = _decoded(testdata, model, words=True)
    for segs, own in zip(together, alone, strict=True):
        assert [(fw.text, fw.avg_logprob) for fw in segs] == [(fw.text, fw.avg_logprob) for fw in own]
        times = [(w.start, w.end) for fw in segs for w in fw.words or ()]
        own_times = [(w.start, w.end) for fw in own for w in fw.words or ()]
        assert len(times) == len(own_times) > 0
        assert np.abs(np.array(times) - np.array(own_times)).max() <= 0.05
