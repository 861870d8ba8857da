#!/usr/bin/env python3
"""Diarization error rate, speaker counts and RTF of the engine's `diarize` path, or of what a client gets.

    nice -n 10 .venv/bin/python bench/diarization.py --seed 7,13,17 --cache /tmp/diar-cache   # the shared sets
    nice -n 10 .venv/bin/python bench/diarization.py --only meetings --bound --set merge_sim=0.88 --json OUT
    flock ~/.sori-bench.lock nice -n 5 .venv/bin/python bench/diarization.py --voices ../voices --cache /tmp/conv2
    flock ~/.sori-bench.lock .venv/bin/python bench/diarization.py --service --only meetings   # through bin/sori

The sets (nothing is written into the repository):

1. `recordings`: the multi-speaker recordings of ../shared/testdata with reference turns (`multi/*.rttm`; a `.uem`
   restricts scoring to its region): deeply_ko_dialogue_constructed (2 Korean speakers), pyannote_sample (2),
   pyannote_dev00/01 (AMI excerpts), picovoice_falcon_test (3, coarse turns).
2. `meetings` (read from `--meetings`, default ../meetings, outside git, when its MANIFEST.tsv is there;
   tools/corpora/build_meetings.py rebuilds it): 30-60 s AMI excerpts with 3-4 reference speakers, far-field-like,
   overlapped speech. Rows marked `held-out` in the manifest get `~held` in their name and were never used to
   choose settings. `2s+` = reference speakers with at least 2 s of speech (sori_eval.der.main_speakers): many
   excerpts hold someone who says one word, so the count is judged against these.
3. `calls`, built: utterances of known, different speakers, energy-trimmed (+-50 ms) and laid end to end with
   0.2-1.2 s gaps of faint noise, so the true turns are known exactly; one set per `--seed`.
   - `call2-*`: two-party Korean calls, 14 alternating turns of speakers sub1001a and sub1001b (the two speakers of
     the ko/deeply_* files, see MANIFEST_DETAILS), both in one room (one call per room of the corpus), or each in a
     room of their own (a phone call's two ends);
   - `mix{1,2,3,4}-*`: 1-4 speakers drawn from {ko sub1001a, ko sub1001b, en JFK, en LibriSpeech speaker}, cut into
     2-6 s pieces, shuffled turns (for speaker-count accuracy); then the real one-speaker recordings (ko/deeply_*,
     en/*), where a split is the typical failure.
4. `--voices DIR` alone: conversations of 1-6 speakers built from a folder of many voices (sori_eval/voices.py:
   a third same-gender, half phone-band, `--per-set` per part, tuning and held-out speakers apart, `--seed`
   default 56). Printed per part and its same-gender / mixed / phone-band / clean / k-speaker subsets: the count
   exact and within one, DER c0.25 with the count estimated (and its confusion part) and given.

Each file is embedded once (VAD, windows, embeddings: `embed_samples`) and clustered twice: with `spk_count` = the
true count, and with `spk_count` = 0 (estimated). `--cache DIR` keeps the embeddings (deterministic for a file and
the embedding settings, which are part of the cache key), so a rerun that only changes clustering settings takes
seconds; a cached file has no RTF. Printed:

    DER      sori_eval.der: (missed + false alarm + confusion) / reference speech, frame-based at 10 ms, speakers
             mapped one-to-one (Hungarian). `c0.25`: the 0.25 s around every reference boundary not scored (the
             usual collar); `c0`: everything scored. Overlapped speech counts once per speaker, in the reference and
             in the hypothesis (the overlap turns).
    est      the estimated number of speakers (spk_count 0); `count accuracy` = files where est == truth.
    RTF      diarization wall time / audio duration (VAD + embeddings + clustering with the count given; the audio is
             decoded beforehand); the closing line also gives CPU time / audio duration (all threads of the
             process), which depends less on what else runs on the machine (docs/diarization.md, Speed).
    --bound  each meeting excerpt's DER c0.25 beside segmentation-3.0's own 10 s windows, each mapped perfectly
             (window_bound).

`--service` sends each meeting (or, `--only recordings`, each recording) through `bin/sori transcribe` with the
job's `--config` (`use_diarization`), after `make build`, and scores the utterances' spans and `spk` against the
reference turns (words the recognizer drops, or places loosely, count as errors): per file the reference speakers,
those of 2 s or more, the count, DER c0.25 / c0 and wall seconds; then tuning / held-out / all means and counts.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio as audio_mod  # noqa: E402
from sori_engine.diarization import DiarizeConfig, Embedded, diarize_embedded, embed_samples, speaker_models  # noqa: E402
from sori_engine.diarization.config import with_overrides  # noqa: E402
from sori_engine.diarization.models.segmentation import chunk_starts  # noqa: E402
from sori_eval.der import FRAME, Ref, Uem, der, grid, main_speakers, read_rttm, read_uem, scored_frames  # noqa: E402
from sori_eval.testdata import TESTDATA  # noqa: E402
from sori_eval.voices import conversations, read_voices, split  # noqa: E402

MEETINGS = ROOT.parent / "meetings"
SR = 16000
# (name, samples, reference turns, UEM, WAV path or None for built audio, tags: "same", "phone" for --voices)
File = tuple[str, np.ndarray, Ref, Uem, Path | None, frozenset[str]]


def window_bound(samples: np.ndarray, ref: Ref, collar: float, uem: Uem, step_s: float = 1.0) -> float:
    """What segmentation-3.0 itself allows: each of its 10 s windows (every `step_s`) scored alone, its local speakers
    (the arg-max powerset class per frame, on the 10 ms grid) mapped to the reference speakers by the assignment that
    maximises their overlap in that window (a perfect clustering of that window), errors counted as `der` counts
    them and summed over the windows: the windowed perfect-mapping figure of issue 56. It is no lower bound of the
    pipeline: the pipeline joins Silero VAD's speech to the model's and averages overlapping windows, which this
    does not (docs/diarization.md, "Meetings")."""
    model = speaker_models().segmentation()
    geo = model.geometry
    n = len(samples)
    grid_n = int(np.ceil(n / SR / FRAME)) + 1
    r = grid(ref, grid_n)
    scored = scored_frames(ref, grid_n, collar, uem)
    members = np.array([[k in pair for pair in geo.classes] for k in range(geo.local_speakers)])  # speaker x class
    errors = total = 0
    starts = chunk_starts(n, max(1, round(step_s * SR)), geo.chunk_samples)
    for b0 in range(0, len(starts), 16):
        batch = starts[b0 : b0 + 16]
        chunks = np.zeros((len(batch), geo.chunk_samples), np.float32)
        for i, st in enumerate(batch):
            piece = samples[st : st + geo.chunk_samples]
            chunks[i, : len(piece)] = piece
        cls = np.argmax(model(chunks), axis=2)  # (B, frames)
        for i, st in enumerate(batch):
            g0 = int(round(st / SR / FRAME))
            frames = np.arange(g0, min(grid_n, g0 + int(round(geo.chunk_samples / SR / FRAME))))
            frames = frames[scored[frames]]
            if frames.size == 0:
                continue
            t = frames * FRAME + FRAME / 2 - st / SR
            f = np.clip(np.round((t - geo.frame_duration_s / 2) / geo.frame_step_s).astype(np.int64), 0, geo.frames - 1)
            h = members[:, cls[i, f]].T  # (frames, local speakers)
            rr = r[frames]
            overlap = rr.T.astype(np.int64) @ h.astype(np.int64)
            ri, hi = linear_sum_assignment(-overlap)
            n_ref, n_hyp = rr.sum(axis=1), h.sum(axis=1)
            errors += int(np.maximum(n_ref, n_hyp).sum() - overlap[ri, hi].sum())
            total += int(n_ref.sum())
    return errors / max(total, 1)


# ---------------------------------------------------------------------------------------------------------------
# The sets


def recordings() -> list[File]:
    out: list[File] = []
    for rttm in sorted((TESTDATA / "multi").glob("*.rttm")):
        wav, uem = rttm.with_suffix(".wav"), read_uem(rttm.with_suffix(".uem"))
        samples = audio_mod.decode(str(wav))
        out.append((rttm.stem, samples[: int(uem[1] * SR)] if uem else samples, read_rttm(rttm), uem, wav, frozenset()))
    return out


def meetings(folder: Path) -> list[File]:
    """The meeting set listed in `folder`/MANIFEST.tsv: each row's WAV, RTTM and UEM. A file's name gets `~held`
    when its row's split is held-out (never used to choose settings)."""
    out: list[File] = []
    with open(folder / "MANIFEST.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            wav = folder / row["file"]
            uem = read_uem(folder / row["uem"]) if row.get("uem") else None
            name = wav.stem + ("~held" if row["split"].startswith("held") else "")
            out.append((name, audio_mod.decode(str(wav)), read_rttm(folder / row["rttm"]), uem, wav, frozenset()))
    return out


def _trim(x: np.ndarray) -> np.ndarray:
    """Energy trim: drop leading/trailing 10 ms frames below 5 % of the peak frame RMS, keep +-50 ms."""
    f = 160
    n = len(x) // f
    if n == 0:
        return x
    rms = np.sqrt(np.mean(x[: n * f].reshape(n, f) ** 2, axis=1))
    on = np.flatnonzero(rms > 0.05 * rms.max())
    if on.size == 0:
        return x
    s, e = max(0, on[0] * f - 800), min(len(x), (on[-1] + 1) * f + 800)
    return x[s:e]


def _pieces(x: np.ndarray, rng: np.random.Generator) -> list[np.ndarray]:
    """Cut a long recording into 2-6 s pieces, each energy-trimmed."""
    out, pos = [], 0
    while pos < len(x) - SR:
        n = int(rng.uniform(2, 6) * SR)
        piece = _trim(x[pos : pos + n])
        if len(piece) > 0.8 * SR:
            out.append(piece)
        pos += n
    return out


def speaker_pools(rng: np.random.Generator) -> dict[str, list[np.ndarray]]:
    """Utterance pools by speaker and room: `ko_a@AnechoicChamber`, ..., plus `en_jfk` and `en_libri`."""
    pools: dict[str, list[np.ndarray]] = {}
    with open(TESTDATA / "MANIFEST_DETAILS.tsv") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            name, notes = row["local_file"], row["notes"]
            if name.startswith("ko/deeply_") and "noise=none" in notes:
                spk = "ko_a" if "speaker=sub1001a" in notes else "ko_b"
                room = notes.split("room=")[1].split(";")[0]
                pools.setdefault(f"{spk}@{room}", []).append(_trim(audio_mod.decode(str(TESTDATA / name))))
    for key, name in (("en_jfk", "en/whisper_jfk.flac"), ("en_libri", "en/picovoice_leopard_test_en_librispeech.wav")):
        pools[key] = _pieces(audio_mod.decode(str(TESTDATA / name)), rng)
    return pools


def single_speaker_files() -> list[tuple[str, np.ndarray]]:
    """Real one-speaker recordings: every ko/deeply_* file (2-8 s each) and the en/ files (JFK, LibriSpeech, two
    60 s earnings-call clips: MANIFEST_DETAILS says 1 speaker for the first; the second's transcript is one
    continuous prepared statement)."""
    names = sorted(p.relative_to(TESTDATA).as_posix() for p in (TESTDATA / "ko").glob("deeply_*.wav"))
    names += sorted(p.relative_to(TESTDATA).as_posix() for p in (TESTDATA / "en").iterdir() if p.is_file())
    return [(n, audio_mod.decode(str(TESTDATA / n))) for n in names]


def build_call(
    pools: dict[str, list[np.ndarray]], speakers: list[str], turns: int, rng: np.random.Generator
) -> tuple[np.ndarray, Ref]:
    parts, ref, t = [], [], 0.0
    used = {s: list(rng.permutation(len(pools[s]))) for s in speakers}
    order = []
    for i in range(turns):  # every speaker at least once, first the listed order, then random without repeats
        if i < len(speakers):
            order.append(speakers[i])
        else:
            order.append(rng.choice([s for s in speakers if s != order[-1]] or speakers))
    for spk in order:
        if not used[spk]:
            used[spk] = list(rng.permutation(len(pools[spk])))
        piece = pools[spk][used[spk].pop()]
        gap = np.float32(rng.normal(0, 0.002, int(rng.uniform(0.2, 1.2) * SR)))
        parts.append(gap)
        t += len(gap) / SR
        parts.append(piece)
        ref.append((t, t + len(piece) / SR, spk))
        t += len(piece) / SR
    parts.append(np.float32(rng.normal(0, 0.002, SR // 2)))
    return np.concatenate(parts).astype(np.float32), ref


def built_calls(seed: int) -> list[tuple[str, np.ndarray, Ref]]:
    rng = np.random.default_rng(seed)
    pools = speaker_pools(rng)
    out: list[tuple[str, np.ndarray, Ref]] = []
    # Two-party calls: both speakers recorded in the same room (as in a meeting), one call per room, and a
    # "phone" call where each party is in a room of their own.
    pairs = [(f"ko_a@{r}", f"ko_b@{r}") for r in ("AnechoicChamber", "AirbnbStudio", "DanceStudio")]
    pairs += [("ko_a@AnechoicChamber", "ko_b@DanceStudio"), ("ko_a@AirbnbStudio", "ko_b@AnechoicChamber")]
    for i, (a, b) in enumerate(pairs):
        x, ref = build_call(pools, [a, b], 14, rng)
        out.append((f"call2-{i}-{a.split('@')[1][:5]}-{b.split('@')[1][:5]}", x, ref))
    a, b = "ko_a@AnechoicChamber", "ko_b@AnechoicChamber"
    combos = {
        1: [[a], ["ko_b@AirbnbStudio"], ["en_jfk"], ["en_libri"]],
        2: [[a, "en_jfk"], [b, "en_libri"], ["en_jfk", "en_libri"]],
        3: [[a, b, "en_jfk"], [a, "en_jfk", "en_libri"], [b, a, "en_libri"]],
        4: [[a, b, "en_jfk", "en_libri"], ["en_libri", b, "en_jfk", a]],
    }
    for k, lst in combos.items():
        for j, spks in enumerate(lst):
            x, ref = build_call(pools, spks, 6 if k == 1 else 4 * k + 2, rng)
            out.append((f"mix{k}-{j}", x, ref))
    return out


def voice_conversations(args: argparse.Namespace) -> list[tuple[str, Iterator[File]]]:
    parts = split(read_voices(args.voices), args.held)
    for part, spk in parts.items():
        g = {x: sum(s.gender == x for s in spk) for x in sorted({s.gender for s in spk})}
        print(f"{part}: {len(spk)} speakers {g}")

    def files(part: str) -> Iterator[File]:  # built part by part
        for c in conversations(parts[part], part, args.per_set, int(args.seed or 56)):
            tags = frozenset(t for t, on in (("same", c.same_gender), ("phone", c.phone)) if on)
            yield c.name, c.samples, c.ref, None, None, tags

    return [(part, files(part)) for part in parts]


# ---------------------------------------------------------------------------------------------------------------
# Embedding cache

_EMBED_FIELDS = ("seg_step_s", "seg_onset", "min_gap_s", "min_speech_s", "min_local_turn_s", "silero_union", "piece_s",
                 "window_s", "step_s", "min_window_s", "vad_threshold", "vad_min_silence_ms", "vad_pad_ms")
_PAIRS = ("regions", "windows", "pieces")  # lists of (start, end) frames


def embed_cached(name: str, samples: np.ndarray, cfg: DiarizeConfig, cache: Path | None) -> tuple[Embedded, bool]:
    """The file's embeddings, from the cache when there; True when they were computed now. One file per audio
    content, models and embedding settings (the name only makes it readable)."""
    models = speaker_models()
    h = hashlib.sha1(samples.tobytes())
    h.update(repr(["v5", models.segmentation_entry, models.embedding_entry] + [getattr(cfg, f) for f in _EMBED_FIELDS])
             .encode())
    path = cache / f"{name.replace('/', '_')}-{h.hexdigest()[:16]}.npz" if cache else None
    if path and path.exists():
        z = np.load(path, allow_pickle=False)
        pairs = {k: [tuple(p) for p in z[k].tolist()] for k in _PAIRS}
        return Embedded(**{k: z[k].item() if z[k].ndim == 0 else z[k] for k in z.files if k not in _PAIRS}, **pairs), False
    em = embed_samples(samples, cfg)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(path, **{k: np.asarray(v, dtype=np.int64).reshape(-1, 2) if k in _PAIRS else v
                          for k, v in asdict(em).items()})
    return em, True


# ---------------------------------------------------------------------------------------------------------------
# Scoring


def row_of(name: str, ref: Ref, uem: Uem, audio_s: float, est: list, fixed: list | None = None) -> dict:
    """One file's figures: `est` (and `fixed`, the count given) are (start, end, speaker) turns."""
    row = {"file": name, "speakers": len({s for _, _, s in ref}), "main_speakers": main_speakers(ref, uem),
           "estimated": len({s for _, _, s in est}), "audio_s": audio_s,
           "est_c025": der(ref, est, 0.25, uem), "est_c0": der(ref, est, 0.0, uem)}
    if fixed is not None:
        row.update(fixed_c025=der(ref, fixed, 0.25, uem), fixed_c0=der(ref, fixed, 0.0, uem))
    return row


def run_engine(cfg: DiarizeConfig, files: Iterable[File], args: argparse.Namespace, totals: list[float]) -> list[dict]:
    """Every file through the engine's diarization, count given and estimated; `totals` gathers audio, wall and CPU
    seconds of the files embedded in this run."""
    print(f"{'file':34} {'spk':>3} {'2s+':>3} {'est':>3}  {'DER c0.25':>9} {'DER c0':>7}  {'est DER c0.25':>13}"
          f" {'est c0':>7}  {'RTF':>6}")
    rows = []
    for name, samples, ref, uem, _wav, tags in files:
        truth = len({s for _, _, s in ref})
        t0, c0 = time.perf_counter(), time.process_time()
        em, computed = embed_cached(name, samples, cfg, args.cache)
        fixed = diarize_embedded(em, truth, cfg)
        t1, c1 = time.perf_counter(), time.process_time()
        est = diarize_embedded(em, 0, cfg)
        audio_s = len(samples) / SR
        if computed:
            for i, v in enumerate((audio_s, t1 - t0, c1 - c0)):
                totals[i] += v
        turns = [[(t.start, t.end, t.speaker) for t in r.turns] for r in (est, fixed)]
        row = row_of(name, ref, uem, audio_s, *turns)
        row.update(estimated=est.num_speakers, rtf=(t1 - t0) / audio_s if computed else None, tags=sorted(tags))
        if args.bound and name.startswith("ami_"):
            row["bound_c025"] = window_bound(samples, ref, 0.25, uem)
        rows.append(row)
        print(f"{name:34} {truth:3} {row['main_speakers']:3} {est.num_speakers:3}  {row['fixed_c025']['der']:9.1%}"
              f" {row['fixed_c0']['der']:7.1%}  {row['est_c025']['der']:13.1%} {row['est_c0']['der']:7.1%}"
              f"  {format(row['rtf'], '.3f') if computed else 'cached':>6}"
              + (f"  windows alone c0.25 {row['bound_c025']:.1%}" if "bound_c025" in row else ""), flush=True)
    return rows


def summary_shared(rows: list[dict], cfg: DiarizeConfig, args: argparse.Namespace) -> dict:
    """The shared sets' group means and count accuracies."""

    def mean(sel: list[dict], key: str, part: str = "der") -> float:
        return float(np.mean([r[key][part] for r in sel])) if sel else float("nan")

    summary: dict = {"groups": {}, "counts": {}}
    print()
    groups = {
        "recordings": [r for r in rows if not r["file"].startswith(("call", "mix", "ami_"))],
        "meetings, tuning": [r for r in rows if r["file"].startswith("ami_") and "~held" not in r["file"]],
        "meetings, held out": [r for r in rows if r["file"].startswith("ami_") and "~held" in r["file"]],
        "built 2-party calls": [r for r in rows if r["file"].startswith("call2")],
        "built mixes": [r for r in rows if r["file"].startswith("mix")],
    }
    for gname, sel in groups.items():
        if not sel:
            continue
        g = {f"{key}_{part}": mean(sel, key, part) for key in ("fixed_c025", "fixed_c0", "est_c025", "est_c0")
             for part in ("der", "miss", "fa", "conf")}
        summary["groups"][gname] = g
        print(
            f"{gname:22} mean DER, spk_count given: c0.25 {g['fixed_c025_der']:.1%}, c0 {g['fixed_c0_der']:.1%} "
            f"(c0: miss {g['fixed_c0_miss']:.1%}, FA {g['fixed_c0_fa']:.1%}, conf {g['fixed_c0_conf']:.1%}); "
            f"estimated: c0.25 {g['est_c025_der']:.1%}, c0 {g['est_c0_der']:.1%} (c0 conf {g['est_c0_conf']:.1%})"
        )
    for k in (1, 2, 3, 4):
        sel = [r for r in rows if r["speakers"] == k]
        if sel:
            ok = sum(r["estimated"] == k for r in sel)
            summary["counts"][str(k)] = f"{ok}/{len(sel)}"
            print(f"count accuracy, {k} speakers: {ok}/{len(sel)}")
    sel = [r for r in rows if 2 <= r["speakers"] <= 4 and not r["file"].startswith("ami_")]
    summary["counts"]["2-4"] = f"{sum(r['estimated'] == r['speakers'] for r in sel)}/{len(sel)}"
    print(f"count accuracy, 2-4 speakers (recordings, built files): {summary['counts']['2-4']}")
    sel = [r for r in rows if r["file"].startswith("ami_") and r["main_speakers"] >= 3]
    if sel:
        ok_all = sum(r["estimated"] == r["speakers"] for r in sel)
        ok_main = sum(r["estimated"] == r["main_speakers"] for r in sel)
        summary["counts"]["meetings 3+"] = f"{ok_main}/{len(sel)}"
        print(f"count accuracy, meetings with 3+ speakers of >= 2 s: {ok_main}/{len(sel)} against those speakers, "
              f"{ok_all}/{len(sel)} against every reference speaker")
    sel = [r for r in rows if r["file"].startswith("ami_")]
    if sel and "bound_c025" in sel[0]:
        print(f"meetings: mean DER c0.25 (count estimated) {np.mean([r['est_c025']['der'] for r in sel]):.1%} beside "
              f"the windows alone {np.mean([r['bound_c025'] for r in sel]):.1%} (each 10 s window of segmentation-3.0 "
              "with its local speakers mapped perfectly)")
    if sel:
        ok = sum(r["estimated"] == r["main_speakers"] for r in sel)
        near = sum(abs(r["estimated"] - r["main_speakers"]) <= 1 for r in sel)
        summary["counts"]["meetings"] = f"{ok}/{len(sel)}"
        print(f"count accuracy, all meetings (against speakers of >= 2 s): {ok}/{len(sel)}, within one {near}/{len(sel)}")
    if args.only in (None, "calls"):
        singles = single_speaker_files()
        counts = [diarize_embedded(embed_cached(n, x, cfg, args.cache)[0], 0, cfg).num_speakers for n, x in singles]
        wrong = [f"{name}={k}" for (name, _), k in zip(singles, counts) if k != 1]
        summary["counts"]["1 (recordings)"] = f"{counts.count(1)}/{len(counts)}"
        print(f"count accuracy, single-speaker recordings (ko/deeply_*, en/*): {counts.count(1)}/{len(counts)}"
              + (f" (wrong: {', '.join(wrong)})" if wrong else ""))
    return summary


def summary_voices(label: str, rows: list[dict]) -> str:
    if not rows:
        return f"{label:28} (none)"
    exact = sum(r["estimated"] == r["speakers"] for r in rows)
    near = sum(abs(r["estimated"] - r["speakers"]) <= 1 for r in rows)
    m = {k: float(np.mean([r[k]["der"] for r in rows])) for k in ("est_c025", "fixed_c025")}
    conf = float(np.mean([r["est_c025"]["conf"] for r in rows]))
    return (f"{label:28} n={len(rows):3}  count exact {exact}/{len(rows)} ({exact / len(rows):.0%}), within one "
            f"{near}/{len(rows)}  DER est {m['est_c025']:.1%} (conf {conf:.1%}), given {m['fixed_c025']:.1%}")


def run_service(files: list[File], config: dict) -> list[dict]:
    """Each file through `bin/sori transcribe` (the job pipeline a worker of `sori serve` runs)."""
    print(f"{'file':28} {'spk':>3} {'2s+':>3} {'est':>3}  {'DER c0.25':>9} {'DER c0':>7}  {'wall s':>6}")
    rows = []
    for name, _samples, ref, uem, wav, _tags in files:
        t0 = time.perf_counter()
        out = subprocess.run([str(ROOT / "bin" / "sori"), "transcribe", "--no-progress", "--config",
                              json.dumps(config), str(wav)], capture_output=True, text=True, check=False, cwd=ROOT)
        wall = time.perf_counter() - t0
        utts = json.loads(out.stdout).get("results", {}).get("utterances", [])
        hyp = [(u["start_at"] / 1000, (u["start_at"] + u["duration"]) / 1000, int(u["spk"])) for u in utts]
        row = row_of(name, ref, uem, 0.0, hyp)
        rows.append(row)
        print(f"{name:28} {row['speakers']:3} {row['main_speakers']:3} {row['estimated']:3}  "
              f"{row['est_c025']['der']:9.1%} {row['est_c0']['der']:7.1%}  {wall:6.1f}", flush=True)
    for tag, sel in (("tuning", [r for r in rows if "~held" not in r["file"]]),
                     ("held out", [r for r in rows if "~held" in r["file"]]), ("all", rows)):
        if sel:
            ok = sum(r["estimated"] == r["main_speakers"] for r in sel)
            print(f"{tag:9} mean DER c0.25 {np.mean([r['est_c025']['der'] for r in sel]):.1%}, "
                  f"c0 {np.mean([r['est_c0']['der'] for r in sel]):.1%}; count right {ok}/{len(sel)}")
    sel = [r for r in rows if r["main_speakers"] >= 3]
    if sel:
        print(f"count right on files with 3+ speakers of >= 2 s: "
              f"{sum(r['estimated'] == r['main_speakers'] for r in sel)}/{len(sel)}")
    return rows


def config_of(assignments: list[str]) -> DiarizeConfig:
    """The engine's diarization settings for its models (speaker_models), with `--set NAME=VALUE` overrides."""
    try:
        return with_overrides(speaker_models().config, {k: float(v) for k, v in (a.split("=", 1) for a in assignments)})
    except ValueError as e:
        raise SystemExit(str(e)) from None


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--only", choices=["recordings", "meetings", "calls"], help="one of the shared sets only")
    ap.add_argument("--meetings", type=Path, default=MEETINGS, help="the meeting set's folder (MANIFEST.tsv)")
    ap.add_argument("--seed", help="seeds of the built calls, comma-separated (default 7); with --voices, one (56)")
    ap.add_argument("--voices", type=Path, help="conversations built from this voices folder instead of the sets")
    ap.add_argument("--per-set", type=int, default=45, help="with --voices: conversations per part")
    ap.add_argument("--held", type=float, default=0.4, help="with --voices: share of speakers held out of tuning")
    ap.add_argument("--service", action="store_true", help="through bin/sori transcribe (meetings or recordings)")
    ap.add_argument("--config", default='{"model_name":"whisper","language":"en","use_diarization":true}',
                    help="with --service: the job's config object")
    ap.add_argument("--set", action="append", default=[], help="override a DiarizeConfig field, NAME=VALUE")
    ap.add_argument("--cache", type=Path, help="keep embeddings in this folder (outside the repository)")
    ap.add_argument("--bound", action="store_true",
                    help="meetings: also segmentation-3.0's windows alone, mapped perfectly (window_bound)")
    ap.add_argument("--json", help="write per-file results here")
    args = ap.parse_args()

    if args.service:
        files = recordings() if args.only == "recordings" else meetings(args.meetings)
        result: object = run_service(files, json.loads(args.config))
    else:
        cfg = config_of(args.set)
        print(f"config: {cfg}")
        # warm-up: weights load, VAD session, and scikit-learn's import (about 2 s of CPU, once per engine process)
        warm = audio_mod.decode(str(sorted((TESTDATA / "multi").glob("*.wav"))[0]))[: 20 * SR]
        diarize_embedded(embed_samples(warm, cfg), 2, cfg)
        sets: list[tuple[str, Iterable[File]]] = []
        if args.voices:
            sets = list(voice_conversations(args))
        else:
            files: list[File] = []
            if args.only in (None, "recordings"):
                files += recordings()
            if args.only == "meetings" or (args.only is None and (args.meetings / "MANIFEST.tsv").exists()):
                files += meetings(args.meetings)
            if args.only in (None, "calls"):
                seeds = [int(x) for x in (args.seed or "7").split(",")]
                for seed in seeds:  # with several seeds each file name says its seed
                    files += [(f"{n}@{seed}" if len(seeds) > 1 else n, x, ref, None, None, frozenset())
                              for n, x, ref in built_calls(seed)]
            sets = [("", files)]
        totals = [0.0, 0.0, 0.0]
        result = {}
        for part, files in sets:
            rows = run_engine(cfg, files, args, totals)
            if not args.voices:
                result = {**summary_shared(rows, cfg, args), "rows": rows}
                continue
            result[part] = rows
            for label, keep in (("all", lambda r: True), ("same-gender", lambda r: "same" in r["tags"]),
                                ("mixed", lambda r: "same" not in r["tags"]),
                                ("phone-band", lambda r: "phone" in r["tags"]),
                                ("clean", lambda r: "phone" not in r["tags"]),
                                *((f"{k} speakers", lambda r, k=k: r["speakers"] == k) for k in range(1, 7))):
                print(summary_voices(f"{part}: {label}", [r for r in rows if keep(r)]))
        if totals[0]:
            print(f"RTF (spk_count given): wall {totals[1] / totals[0]:.3f}, CPU time {totals[2] / totals[0]:.3f} "
                  f"over {totals[0]:.0f} s of audio (files embedded in this run)")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
