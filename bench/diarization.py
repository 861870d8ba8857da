#!/usr/bin/env python3
"""Diarization error rate, speaker-count accuracy and real-time factor of the engine's `diarize` path.

Run from the repository root (takes a few minutes on 2 cores):

    .venv/bin/python bench/diarization.py                 # everything, default settings
    .venv/bin/python bench/diarization.py --json /tmp/diar.json --set one_speaker_sim=0.9 --set step_s=0.5
    .venv/bin/python bench/diarization.py --cache /tmp/diar-cache --set merge_sim=0.88   # clustering-only reruns

Three kinds of test audio (nothing is written into the repository):

1. The multi-speaker recordings of ../shared/testdata with reference turns (`multi/*.rttm`; a `.uem` restricts
   scoring to its region): deeply_ko_dialogue_constructed (2 Korean speakers), pyannote_sample (2), pyannote_dev00/01 (AMI excerpts),
   picovoice_falcon_test (3, coarse turns).
2. Meetings (`--only meetings`; read from ../meetings, outside git, when its MANIFEST.tsv is there): 30-60 s AMI
   excerpts with 3-4 reference speakers, far-field-like, overlapped speech (docs/diarization.md, "Meetings" says where
   each comes from and how to rebuild the folder). Rows marked `held-out` in the manifest get `~held` in their name
   and were never used to choose settings. `2s+` = reference speakers with at least 2 s of speech: many excerpts
   hold someone who says one word, so the count is judged against these.
3. Built "calls": utterances of known, different speakers, energy-trimmed (±50 ms) and laid end to end with 0.2–1.2 s
   gaps of faint noise, so the true turns are known exactly.
   - `call2-*`: two-party Korean calls, 14 alternating turns of speakers sub1001a and sub1001b (the two speakers of
     the ko/deeply_* files, see MANIFEST_DETAILS), both in one room (one call per room of the corpus), or each in a
     room of their own (a phone call's two ends);
   - `mix{1,2,3,4}-*`: 1–4 speakers drawn from {ko sub1001a, ko sub1001b, en JFK, en LibriSpeech speaker}, cut into
     2–6 s pieces, shuffled turns (for speaker-count accuracy).

Each file is embedded once (VAD, windows, d-vectors: `embed_samples`) and clustered twice: with `spk_count` = the
true count, and with `spk_count` = 0 (estimated). `--cache DIR` keeps the embeddings (they are deterministic for a
file, a seed and the VAD/window settings, which are part of the cache key), so a rerun that only changes clustering
settings takes seconds; a cached file has no RTF. Printed:

    DER      diarization error rate = (missed + false alarm + confusion) / reference speech, frame-based at 10 ms,
             speakers mapped one-to-one by the assignment that maximises overlap (Hungarian). `c0.25`: the 0.25 s
             around every reference boundary is not scored (the usual collar); `c0`: everything scored. Overlapped
             reference speech counts once per speaker, and so does the hypothesis's (the campplus backend's overlap
             turns; resemblyzer never overlaps, so overlapped reference speech is partly a miss).
    est      the estimated number of speakers (spk_count 0); `count accuracy` = files where est == truth, also over
             the real one-speaker recordings (ko/deeply_*, en/*), where a split is the typical failure.
    RTF      diarization wall time / audio duration (VAD + embeddings + clustering with the count given; the audio is
             decoded beforehand),
             the models on one thread. Wall time depends on what else runs on the machine; the closing line also
             gives CPU time / audio duration (all threads of the process), which depends on it less (a crowded machine still
             inflates it several-fold: docs/diarization.md, Speed); with several backends the last lines compare them.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import sys
import time
from dataclasses import fields, replace
from pathlib import Path

import numpy as np
from scipy.optimize import linear_sum_assignment

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_engine import audio as audio_mod  # noqa: E402
from sori_engine.diarization import (  # noqa: E402
    BACKENDS,
    DiarizeConfig,
    Embedded,
    diarize_embedded,
    embed_samples,
)
from sori_engine.phone import band_db  # noqa: E402

TESTDATA = ROOT.parent / "shared" / "testdata"
MEETINGS = ROOT.parent / "meetings"  # the meeting set (outside git): MANIFEST.tsv, WAV + RTTM + UEM per file
SR = 16000
FRAME = 0.01

Ref = list[tuple[float, float, str]]


# ---------------------------------------------------------------------------------------------------------------
# Scoring


def _grid(turns: list, n: int) -> np.ndarray:
    """(frames, speakers) activity of `turns` on the 10 ms grid, speakers in sorted order."""
    ids = sorted({spk for _, _, spk in turns})
    grid = np.zeros((n, max(1, len(ids))), dtype=bool)
    for s, e, spk in turns:
        grid[int(round(s / FRAME)) : int(round(e / FRAME)), ids.index(spk)] = True
    return grid


def _scored(ref: Ref, n: int, collar: float, uem: tuple[float, float] | None) -> np.ndarray:
    """The frames scored: inside the UEM, outside `collar` of every reference boundary."""
    scored = np.ones(n, dtype=bool)
    if uem:
        scored[:] = False
        scored[int(round(uem[0] / FRAME)) : int(round(uem[1] / FRAME))] = True
    if collar > 0:
        c = int(round(collar / FRAME))
        for s, e, _ in ref:
            for b in (int(round(s / FRAME)), int(round(e / FRAME))):
                scored[max(0, b - c) : b + c] = False
    return scored


def der(ref: Ref, hyp: list[tuple[float, float, int]], collar: float, uem: tuple[float, float] | None) -> dict:
    end = max([e for _, e, _ in ref] + [e for _, e, _ in hyp] + [uem[1] if uem else 0.0]) + 1
    n = int(np.ceil(end / FRAME))
    r, h = _grid(ref, n), _grid(hyp, n)
    scored = _scored(ref, n, collar, uem)
    r, h = r[scored], h[scored]
    overlap = r.T.astype(np.int64) @ h.astype(np.int64)
    ri, hi = linear_sum_assignment(-overlap)
    correct = overlap[ri, hi].sum()
    n_ref, n_hyp = r.sum(axis=1), h.sum(axis=1)
    total = n_ref.sum()
    miss = np.maximum(0, n_ref - n_hyp).sum()
    fa = np.maximum(0, n_hyp - n_ref).sum()
    conf = np.minimum(n_ref, n_hyp).sum() - correct
    return {
        "der": float((miss + fa + conf) / max(total, 1)),
        "miss": float(miss / max(total, 1)),
        "fa": float(fa / max(total, 1)),
        "conf": float(conf / max(total, 1)),
    }


def window_bound(samples: np.ndarray, ref: Ref, collar: float, uem: tuple[float, float] | None,
                 step_s: float = 1.0) -> float:
    """What segmentation-3.0 itself allows: each of its 10 s windows (every `step_s`) scored alone, its local speakers
    (the arg-max powerset class per frame, on the 10 ms grid) mapped to the reference speakers by the assignment that
    maximises their overlap in that window (a perfect clustering of that window), errors counted as `der` counts
    them and summed over the windows: the windowed perfect-mapping figure of issue 56. It is no lower bound of the
    pipeline: the pipeline joins Silero VAD's speech to the model's and averages overlapping windows, which this
    does not (docs/diarization.md, "Meetings")."""
    from sori_engine.diarization.models.segmentation import (
        CHUNK_SAMPLES,
        FRAME_DURATION_S,
        FRAME_STEP_S,
        FRAMES_PER_CHUNK,
        POWERSET,
        chunk_starts,
    )
    from sori_engine.diarization.pipeline import _segmentation_model

    model = _segmentation_model()
    n = len(samples)
    grid_n = int(np.ceil(n / SR / FRAME)) + 1
    r = _grid(ref, grid_n)
    scored = _scored(ref, grid_n, collar, uem)
    members = np.array([[k in pair for pair in POWERSET] for k in range(3)])  # local speaker x class
    errors = total = 0
    starts = chunk_starts(n, max(1, round(step_s * SR)))
    for b0 in range(0, len(starts), 16):
        batch = starts[b0 : b0 + 16]
        chunks = np.zeros((len(batch), CHUNK_SAMPLES), np.float32)
        for i, st in enumerate(batch):
            piece = samples[st : st + CHUNK_SAMPLES]
            chunks[i, : len(piece)] = piece
        cls = np.argmax(model(chunks), axis=2)  # (B, 589)
        for i, st in enumerate(batch):
            g0 = int(round(st / SR / FRAME))
            grid = np.arange(g0, min(grid_n, g0 + int(round(CHUNK_SAMPLES / SR / FRAME))))
            grid = grid[scored[grid]]
            if grid.size == 0:
                continue
            t = grid * FRAME + FRAME / 2 - st / SR
            f = np.clip(np.round((t - FRAME_DURATION_S / 2) / FRAME_STEP_S).astype(np.int64), 0, FRAMES_PER_CHUNK - 1)
            h = members[:, cls[i, f]].T  # (frames, 3 local speakers)
            rr = r[grid]
            overlap = rr.T.astype(np.int64) @ h.astype(np.int64)
            ri, hi = linear_sum_assignment(-overlap)
            n_ref, n_hyp = rr.sum(axis=1), h.sum(axis=1)
            errors += int(np.maximum(n_ref, n_hyp).sum() - overlap[ri, hi].sum())
            total += int(n_ref.sum())
    return errors / max(total, 1)


# ---------------------------------------------------------------------------------------------------------------
# Data


def read_rttm(path: Path) -> Ref:
    out = []
    for line in path.read_text().splitlines():
        p = line.split()
        if p and p[0] == "SPEAKER":
            out.append((float(p[3]), float(p[3]) + float(p[4]), p[7]))
    return out


def main_speakers(ref: Ref, uem: tuple[float, float] | None, min_s: float = 2.0) -> int:
    """Reference speakers with at least min_s of speech in the scored region: a meeting excerpt's reference often
    holds someone who says one word; no clustering finds a speaker from 0.4 s, so counts are judged against these."""
    lo, hi = uem if uem else (0.0, float("inf"))
    total: dict[str, float] = {}
    for s, e, spk in ref:
        total[spk] = total.get(spk, 0.0) + max(0.0, min(e, hi) - max(s, lo))
    return sum(1 for v in total.values() if v >= min_s)


def recordings() -> list[tuple[str, np.ndarray, Ref, tuple[float, float] | None]]:
    out = []
    for rttm in sorted((TESTDATA / "multi").glob("*.rttm")):
        wav = rttm.with_suffix(".wav")
        uem_path = rttm.with_suffix(".uem")
        uem = None
        if uem_path.exists():
            p = uem_path.read_text().split()
            uem = (float(p[2]), float(p[3]))
        samples = audio_mod.decode(str(wav))
        if uem:
            samples = samples[: int(uem[1] * SR)]
        out.append((rttm.stem, samples, read_rttm(rttm), uem))
    return out


def meetings(folder: Path) -> list[tuple[str, np.ndarray, Ref, tuple[float, float] | None]]:
    """The meeting set listed in `folder`/MANIFEST.tsv (docs/diarization.md, "Meetings"): each row's WAV, RTTM and
    UEM. A file's name gets `~held` when its row's split is held-out (never used to choose settings)."""
    out = []
    with open(folder / "MANIFEST.tsv", encoding="utf-8") as f:
        for row in csv.DictReader(f, delimiter="\t"):
            wav = folder / row["file"]
            p = (folder / row["uem"]).read_text().split() if row.get("uem") else None
            uem = (float(p[2]), float(p[3])) if p else None
            name = wav.stem + ("~held" if row["split"].startswith("held") else "")
            out.append((name, audio_mod.decode(str(wav)), read_rttm(folder / row["rttm"]), uem))
    return out


def _trim(x: np.ndarray) -> np.ndarray:
    """Energy trim: drop leading/trailing 10 ms frames below 5 % of the peak frame RMS, keep ±50 ms."""
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
    """Cut a long recording into 2–6 s pieces, each energy-trimmed."""
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
    """Real one-speaker recordings: every ko/deeply_* file (2–8 s each) and the en/ files (JFK, LibriSpeech, two
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


def built_calls(seed: int) -> list[tuple[str, np.ndarray, Ref, None]]:
    rng = np.random.default_rng(seed)
    pools = speaker_pools(rng)
    out: list[tuple[str, np.ndarray, Ref, None]] = []
    # Two-party calls: both speakers recorded in the same room (as in a meeting), one call per room, and a
    # "phone" call where each party is in a room of their own.
    pairs = [(f"ko_a@{r}", f"ko_b@{r}") for r in ("AnechoicChamber", "AirbnbStudio", "DanceStudio")]
    pairs += [("ko_a@AnechoicChamber", "ko_b@DanceStudio"), ("ko_a@AirbnbStudio", "ko_b@AnechoicChamber")]
    for i, (a, b) in enumerate(pairs):
        x, ref = build_call(pools, [a, b], 14, rng)
        out.append((f"call2-{i}-{a.split('@')[1][:5]}-{b.split('@')[1][:5]}", x, ref, None))
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
            out.append((f"mix{k}-{j}", x, ref, None))
    return out


# ---------------------------------------------------------------------------------------------------------------
# Embedding cache

_EMBED_FIELDS = ("backend", "seg_step_s", "seg_onset", "min_gap_s", "min_speech_s", "min_local_turn_s",
                 "silero_union", "piece_s", "window_s", "step_s", "min_window_s", "vad_threshold",
                 "vad_min_silence_ms", "vad_pad_ms")


def _cache_path(cache: Path, name: str, samples: np.ndarray, cfg: DiarizeConfig) -> Path:
    """One file per audio content and embedding settings (the name only makes it readable)."""
    h = hashlib.sha1(samples.tobytes())
    h.update(repr(["v4"] + [getattr(cfg, f) for f in _EMBED_FIELDS]).encode())  # v4: whole-piece embeddings
    return cache / f"{name.replace('/', '_')}-{h.hexdigest()[:16]}.npz"


def embed_cached(name: str, samples: np.ndarray, cfg: DiarizeConfig, cache: Path | None) -> tuple[Embedded, bool]:
    """The file's embeddings, from the cache when there; True when they were computed now."""
    path = _cache_path(cache, name, samples, cfg) if cache else None
    if path and path.exists():
        z = np.load(path, allow_pickle=False)
        regions = [tuple(r) for r in z["regions"].tolist()]
        windows = [tuple(w) for w in z["windows"].tolist()]
        extra = {k: z[k] for k in ("overlap", "local", "local2", "piece_emb") if k in z.files}
        if "pieces" in z.files:
            extra["pieces"] = [tuple(p) for p in z["pieces"].tolist()]
        if cfg.backend == "campplus":  # measured again (cheap): caches written before it was kept lack it
            extra["band_db"] = float(z["band_db"]) if "band_db" in z.files else band_db(samples)
        return Embedded(float(z["duration_s"]), int(z["n_frames"]), regions, windows, z["emb"], **extra), False
    em = embed_samples(samples, cfg)
    if path:
        path.parent.mkdir(parents=True, exist_ok=True)
        np.savez(
            path,
            duration_s=em.duration_s,
            n_frames=em.n_frames,
            regions=np.asarray(em.regions, dtype=np.int64).reshape(-1, 2),
            windows=np.asarray(em.windows, dtype=np.int64).reshape(-1, 2),
            emb=em.emb,
            **{k: v for k in ("overlap", "local", "local2", "piece_emb", "band_db") if (v := getattr(em, k)) is not None},
            **({"pieces": np.asarray(em.pieces, dtype=np.int64).reshape(-1, 2)} if em.pieces is not None else {}),
        )
    return em, True


# ---------------------------------------------------------------------------------------------------------------


def run_backend(cfg: DiarizeConfig, files: list, args: argparse.Namespace) -> dict:
    """Every file through one backend: per-file lines, group means, counts; returns the summary figures."""
    print(f"\n=== backend {cfg.backend}\nconfig: {cfg}")
    # warm-up: weights load, VAD session, and scikit-learn's import (about 2 s of CPU, once per engine process)
    warm = embed_samples(files[0][1][: 20 * SR], cfg)
    diarize_embedded(warm, 2, cfg)
    rows = []
    total_audio = total_time = total_cpu = 0.0
    print(f"{'file':34} {'spk':>3} {'2s+':>3} {'est':>3}  {'DER c0.25':>9} {'DER c0':>7}  {'est DER c0.25':>13}"
          f" {'est c0':>7}  {'RTF':>6}")
    for name, samples, ref, uem in files:
        truth = len({s for _, _, s in ref})
        main = main_speakers(ref, uem)
        t0, c0 = time.perf_counter(), time.process_time()
        em, computed = embed_cached(name, samples, cfg, args.cache)
        fixed = diarize_embedded(em, truth, cfg)
        t1, c1 = time.perf_counter(), time.process_time()
        est = diarize_embedded(em, 0, cfg)
        audio_s = len(samples) / SR
        if computed:
            total_audio += audio_s
            total_time += t1 - t0
            total_cpu += c1 - c0
        hyp_f = [(t.start, t.end, t.speaker) for t in fixed.turns]
        hyp_e = [(t.start, t.end, t.speaker) for t in est.turns]
        row = {
            "file": name,
            "speakers": truth,
            "main_speakers": main,
            "estimated": est.num_speakers,
            "audio_s": audio_s,
            "rtf": (t1 - t0) / audio_s if computed else None,
            "fixed_c025": der(ref, hyp_f, 0.25, uem),
            "fixed_c0": der(ref, hyp_f, 0.0, uem),
            "est_c025": der(ref, hyp_e, 0.25, uem),
            "est_c0": der(ref, hyp_e, 0.0, uem),
        }
        if args.bound and name.startswith("ami_"):
            row["bound_c025"] = window_bound(samples, ref, 0.25, uem)
        rows.append(row)
        rtf_s = f"{row['rtf']:.3f}" if computed else "cached"
        print(
            f"{name:34} {truth:3} {main:3} {est.num_speakers:3}  {row['fixed_c025']['der']:9.1%}"
            f" {row['fixed_c0']['der']:7.1%}  {row['est_c025']['der']:13.1%} {row['est_c0']['der']:7.1%}  {rtf_s:>6}"
            + (f"  windows alone c0.25 {row['bound_c025']:.1%}" if "bound_c025" in row else ""),
            flush=True,
        )

    def mean(sel: list[dict], key: str, part: str = "der") -> float:
        return float(np.mean([r[key][part] for r in sel])) if sel else float("nan")

    summary: dict = {"backend": cfg.backend, "groups": {}, "counts": {}}
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
    summary["cpu_rtf"] = total_cpu / total_audio if total_audio else None
    if total_audio:
        print(
            f"RTF (spk_count given): wall {total_time / total_audio:.3f}, CPU time {total_cpu / total_audio:.3f} "
            f"over {total_audio:.0f} s of audio (files embedded in this run)"
        )
    summary["rows"] = rows
    return summary


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--json", help="write per-file results here")
    ap.add_argument("--seed", default="7", help="seed of the built calls; several, comma-separated, build each set")
    ap.add_argument("--backend", default="campplus,resemblyzer",
                    help="speaker-embedding backends to compare, comma-separated (each with its own defaults)")
    ap.add_argument("--set", action="append", default=[], help="override a DiarizeConfig field, NAME=VALUE")
    ap.add_argument("--only", choices=["recordings", "meetings", "calls"], help="run one kind of test audio only")
    ap.add_argument("--meetings", type=Path, default=MEETINGS, help="the meeting set's folder (MANIFEST.tsv)")
    ap.add_argument("--cache", type=Path, help="keep embeddings in this folder (outside the repository)")
    ap.add_argument("--bound", action="store_true",
                    help="meetings: also segmentation-3.0's windows alone, mapped perfectly (window_bound)")
    args = ap.parse_args()
    types = {f.name: f.type for f in fields(DiarizeConfig)}

    files: list = []
    if args.only in (None, "recordings"):
        files += recordings()
    if args.only == "meetings" or (args.only is None and (args.meetings / "MANIFEST.tsv").exists()):
        files += meetings(args.meetings)
    if args.only in (None, "calls"):
        seeds = [int(x) for x in args.seed.split(",")]
        for seed in seeds:  # with several seeds each file name says its seed
            files += [(f"{n}@{seed}" if len(seeds) > 1 else n, *rest) for n, *rest in built_calls(seed)]

    summaries = []
    for backend in args.backend.split(","):
        cfg = BACKENDS[backend]
        for kv in args.set:
            name, value = kv.split("=", 1)
            kind = types[name]
            cfg = replace(cfg, **{name: int(value) if kind in ("int", int) else
                                  value if kind in ("str", str) else float(value)})
        summaries.append(run_backend(cfg, files, args))

    if len(summaries) > 1:
        print("\n=== side by side (mean DER c0.25 / c0; c0 split into missed / false alarm / confusion)")
        for gname in summaries[0]["groups"]:
            for mode, label in (("fixed", "count given"), ("est", "count estimated")):
                cells = []
                for sm in summaries:
                    g = sm["groups"][gname]
                    cells.append(
                        f"{sm['backend']}: {g[f'{mode}_c025_der']:.1%} / {g[f'{mode}_c0_der']:.1%} "
                        f"({g[f'{mode}_c0_miss']:.1%} / {g[f'{mode}_c0_fa']:.1%} / {g[f'{mode}_c0_conf']:.1%})"
                    )
                print(f"{gname:20} {label:16} " + "   ".join(cells))
        for key in summaries[0]["counts"]:
            print(f"correct count, {key:15} " + "   ".join(f"{sm['backend']}: {sm['counts'][key]}" for sm in summaries))
        print("CPU-time RTF (files embedded in this run) "
              + "   ".join(f"{sm['backend']}: {sm['cpu_rtf']:.3f}" if sm["cpu_rtf"] is not None
                         else f"{sm['backend']}: cached" for sm in summaries))
    if args.json:
        Path(args.json).write_text(json.dumps(summaries, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
