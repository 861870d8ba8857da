#!/usr/bin/env python3
"""Robustness of the engine's transcripts to non-speech and phone audio: invented text, loops, narrow-band CER.

Each clip of ../shared/testdata (ko/ja/en, references from MANIFEST.tsv) is turned into one input file per
condition and transcribed by the engine's own `transcriber.transcribe` with the request the service sends for a job
of that model and domain: bench/engine-params.ts runs src/pipeline/run.ts `engineParams` over the model registry
(`--model sommers|whisper`, `--domain GENERAL|CALL`, `--config` for other job fields), so the beam, the VAD (off
for CALL), word timestamps (on: the paragraph splitter is on by default) and prompts are the service's; the engine
parses it with its own `protocol.parse_transcribe`. `--beam`, `--vad`, `--words` override one field; `--set`
overrides an engine constant. Conditions:

    clean        the clip as it is
    tail-*       non-speech appended after the speech: digital silence (5 s), room tone (3 s), phone-line hiss
                 (3 s), clicks (2 s), a breath (1.5 s), music (8 s: hold music); head-* the same prepended
                 (hiss 2 s, room tone 0.5 s)
    nb8k         8 kHz 16-bit PCM wav (a call recording); ulaw8k 8 kHz mu-law wav; amr AMR-NB 12.2 kbit/s
    amr+hiss     AMR-NB with 3 s of line hiss appended (a call that ends before the recording does)
    snr10/snr5   white noise over the whole clip at 10 / 5 dB SNR

Synthetic non-speech, seeded (numpy default_rng(0)), its level relative to the clip's speech (RMS of the clip, "dB
re speech"), as on a real line where the noise rises and falls with the call's gain: room tone = pink noise at -35
dB; line hiss = white noise band-passed to 300-3400 Hz at -20 dB plus a 50 Hz hum at -30 dB; clicks = three 2 ms
impulses at +6 dB on -60 dB noise; breath = noise band-passed to 400-2500 Hz under a 0.8 s raised-cosine envelope,
peak -6 dB, on room tone; music = a seeded melody of plucked notes (a fundamental of 196-523 Hz and four harmonics, a
note every 0.25-0.5 s, decaying) over a held chord a fifth and an octave below, at -6 dB.

Per condition and language:
    CER     normalized character error rate (NFKC, lower case, no spaces/punctuation/symbols; bench/models.py's)
    ins     the hallucination count: hypothesis words inserted before the first or after the last reference
            character (from a character alignment; a word is a whitespace-separated token of the hypothesis, so an
            unspaced Japanese phrase counts once; not a "spill": the first/last reference words written longer,
            see inserted()); ins-ch every character outside the reference's span
    loops   outputs (files) with a repetition loop: a unit of 2+ characters repeated 3+ times in a row in the
            transcript (within a segment or across segments) that the reference does not have, or a segment whose
            text compression ratio is above 2.4 (faster-whisper's threshold)
    cpu s   CPU seconds of this process for the condition (all threads)

With `--plain`, each input is also transcribed by the plain faster-whisper script (WhisperModel.transcribe on the same
model, language and beam, `vad_filter=True`), and each file's line gives the words sori lost against it beside the
words sori invented against it (words in the one normal form, aligned with difflib): a check that removes real
speech shows as lost words. `--audio-dir DIR` adds every .wav of DIR (no reference needed: meetings, calls) in the
clean condition, language `--audio-lang`:

    .venv/bin/python bench/robustness.py --model whisper --langs "" --audio-dir DIR   # meetings: lost / invented

With `--repeats DIR` (../repeats, tools/corpora/build_repeats.py: real speech with one unit said several times), each
file is transcribed by sori and by the plain script, and each split (tune / held) gets the copies said, the copies
each wrote (the normal form's length over the unit's: digits only for the digit files) and the copies lost and
added against the said count, beside both CERs:

    flock ~/.sori-bench.lock .venv/bin/python bench/robustness.py --langs "" --repeats ../repeats

Run from the repository root; `--engine-root` puts that checkout's engine/ first on sys.path, so "before" is
today's main and "after" this tree, with the same models and inputs:

    nice -n 10 .venv/bin/python bench/robustness.py --engine-root /tmp/eng-before --json /tmp/before.json
    nice -n 10 .venv/bin/python bench/robustness.py --json /tmp/after.json
    ... --domain CALL    # a telephone job (model.vad false)
    ... --model whisper  # the general entry (beam 1)
    ... --langs ko --conditions nb8k,amr --max-files 8 --show   # a subset, printing each hypothesis
    ... --compare /tmp/before.json /tmp/after.json                # one before -> after table
"""

from __future__ import annotations

import argparse
import difflib
import json
import re
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))  # sori_eval; the engine under test is chosen next
from sori_eval import engine_under_test  # noqa: E402

engine_under_test.select(sys.argv)  # --engine-root, before the engine is imported
SR = 16000

import av  # noqa: E402
import numpy as np  # noqa: E402
from faster_whisper.transcribe import get_compression_ratio  # noqa: E402

from sori_engine import models, transcriber  # noqa: E402
from sori_engine.audio import decode  # noqa: E402
from sori_engine.protocol import parse_transcribe  # noqa: E402
from sori_eval.entries import service_params  # noqa: E402
from sori_eval.scoring import chars, edit_distance, inserted, words  # noqa: E402  (the one normal form; the hallucination count)
from sori_eval.testdata import TESTDATA, clips  # noqa: E402


# ------------------------------------------------------------------------------------------------ scoring
LOOP = re.compile(r"(.{2,}?)\1{2,}")


def looping(text: str) -> bool:
    return bool(LOOP.search(chars(text))) or (len(text) > 10 and get_compression_ratio(text) > 2.4)


# ------------------------------------------------------------------------------------------------ conditions
RNG_SEED = 0


def _db(level_db: float) -> float:
    return 10 ** (level_db / 20)


def _bandpass(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    spec = np.fft.rfft(x)
    f = np.fft.rfftfreq(x.size, 1 / SR)
    spec[(f < lo) | (f > hi)] = 0
    return np.fft.irfft(spec, x.size).astype(np.float32)


def _at(x: np.ndarray, rms_db: float) -> np.ndarray:
    """x scaled to an RMS of rms_db re SPEECH_RMS (set per clip by build())."""
    rms = float(np.sqrt(np.mean(x**2))) or 1.0
    return (x * (SPEECH_RMS * _db(rms_db) / rms)).astype(np.float32)


SPEECH_RMS = 0.05


def silence(seconds: float, rng: np.random.Generator) -> np.ndarray:
    return np.zeros(int(seconds * SR), dtype=np.float32)


def room_tone(seconds: float, rng: np.random.Generator) -> np.ndarray:
    n = int(seconds * SR)
    spec = np.fft.rfft(rng.standard_normal(n))
    f = np.fft.rfftfreq(n, 1 / SR)
    spec /= np.sqrt(np.maximum(f, 20.0))  # 1/f power: pink
    return _at(np.fft.irfft(spec, n), -35)


def line_hiss(seconds: float, rng: np.random.Generator) -> np.ndarray:
    n = int(seconds * SR)
    hiss = _at(_bandpass(rng.standard_normal(n), 300, 3400), -20)
    hum = SPEECH_RMS * _db(-30) * np.sqrt(2) * np.sin(2 * np.pi * 50 * np.arange(n) / SR)
    return (hiss + hum).astype(np.float32)


def clicks(seconds: float, rng: np.random.Generator) -> np.ndarray:
    x = _at(rng.standard_normal(int(seconds * SR)), -60)
    for at in (0.3, 0.9, 1.5):
        k = int(at * SR)
        x[k : k + int(0.002 * SR)] += SPEECH_RMS * _db(6) * np.sign(rng.standard_normal(int(0.002 * SR)))
    return x


def breath(seconds: float, rng: np.random.Generator) -> np.ndarray:
    x = room_tone(seconds, rng)
    n = int(0.8 * SR)
    burst = _bandpass(rng.standard_normal(n), 400, 2500)
    burst = burst / np.max(np.abs(burst)) * SPEECH_RMS * _db(-6) * 0.5 * (1 - np.cos(2 * np.pi * np.arange(n) / n))
    start = int(0.3 * SR)
    x[start : start + n] += burst.astype(np.float32)
    return x


def music(seconds: float, rng: np.random.Generator) -> np.ndarray:
    n = int(seconds * SR)
    t = np.arange(n) / SR
    x = np.zeros(n)
    root = float(rng.choice([196.0, 220.0, 261.6]))
    for f in (root / 2, root * 0.75):  # the held chord under the tune
        x += 0.3 * np.sin(2 * np.pi * f * t)
    at = 0
    while at < n:
        length = int(rng.uniform(0.25, 0.5) * SR)
        f = root * 2 ** (int(rng.integers(0, 12)) / 12)
        k = np.arange(min(length, n - at)) / SR
        note = sum(np.sin(2 * np.pi * f * h * k) / h for h in range(1, 6)) * np.exp(-k * 6)
        x[at : at + note.size] += note
        at += length
    return _at(x, -6)


def add_noise(x: np.ndarray, snr_db: float, rng: np.random.Generator) -> np.ndarray:
    p = float(np.mean(x**2))
    return (x + rng.standard_normal(x.size).astype(np.float32) * np.sqrt(p / 10 ** (snr_db / 10))).astype(np.float32)


def write_wav(path: Path, x: np.ndarray, rate: int = SR, mulaw: bool = False) -> Path:
    """x (16 kHz float) written at `rate` as 16-bit PCM or mu-law, resampled by FFmpeg (PyAV) as a recorder would."""
    codec = "pcm_mulaw" if mulaw else "pcm_s16le"
    return _encode(path, x, "wav", codec, rate)


def _encode(path: Path, x: np.ndarray, fmt: str, codec: str, rate: int, bit_rate: int | None = None) -> Path:
    pcm = (np.clip(x, -1, 1 - 1 / 32768) * 32768).astype(np.int16)
    with av.open(str(path), "w", format=fmt) as out:
        stream = out.add_stream(codec, rate=rate, layout="mono")
        if bit_rate:
            stream.bit_rate = bit_rate
        frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
        frame.sample_rate = SR
        resampler = av.AudioResampler(format=stream.format.name, layout="mono", rate=rate)
        for f in [*resampler.resample(frame), *resampler.resample(None)]:
            for packet in stream.encode(f):
                out.mux(packet)
        for packet in stream.encode(None):
            out.mux(packet)
    return path


def amr(path: Path, x: np.ndarray) -> Path:
    return _encode(path.with_suffix(".amr"), x, "amr", "libopencore_amrnb", 8000, 12200)


def build(condition: str, x: np.ndarray, path: Path) -> Path:
    """The input file for `condition` from clip x (16 kHz float); a fresh generator per file: same noise before
    and after."""
    global SPEECH_RMS
    rng = np.random.default_rng(RNG_SEED)
    SPEECH_RMS = float(np.sqrt(np.mean(x**2)))
    tails = {"tail-silence5": (silence, 5.0), "tail-room3": (room_tone, 3.0), "tail-hiss3": (line_hiss, 3.0),
             "tail-click2": (clicks, 2.0), "tail-breath1.5": (breath, 1.5), "tail-music8": (music, 8.0)}
    heads = {"head-hiss2": (line_hiss, 2.0), "head-room0.5": (room_tone, 0.5)}
    if condition == "clean":
        return write_wav(path, x)
    if condition in tails:
        make, seconds = tails[condition]
        return write_wav(path, np.concatenate([x, make(seconds, rng)]))
    if condition in heads:
        make, seconds = heads[condition]
        return write_wav(path, np.concatenate([make(seconds, rng), x]))
    if condition == "nb8k":
        return write_wav(path, x, 8000)
    if condition == "ulaw8k":
        return write_wav(path, x, 8000, mulaw=True)
    if condition == "amr":
        return amr(path, x)
    if condition == "amr+hiss":
        return amr(path, np.concatenate([x, line_hiss(3.0, rng)]))
    if condition.startswith("snr"):
        return write_wav(path, add_noise(x, float(condition[3:]), rng))
    raise SystemExit(f"unknown condition {condition}")


CONDITIONS = ["clean", "tail-silence5", "tail-room3", "tail-hiss3", "tail-click2", "tail-breath1.5", "tail-music8",
              "head-hiss2", "head-room0.5", "nb8k", "ulaw8k", "amr", "amr+hiss", "snr10", "snr5"]


# ------------------------------------------------------------------------------------------------ main
def service_requests(args: argparse.Namespace, langs: list[str]) -> dict[str, dict]:
    """Per language, the `transcribe` params the service sends for a job of this model/domain (src/pipeline/run.ts
    engineParams over the model registry, via bench/engine-params.ts), with the --beam/--vad/--words overrides."""
    configs = [json.dumps({**json.loads(args.config), "model_name": args.model, "language": lang,
                           "domain": args.domain}) for lang in langs]
    requests = dict(zip(langs, service_params(configs), strict=True))
    for req in requests.values():
        if args.beam is not None:
            req["model"]["beam_size"] = args.beam
        if args.vad is not None:
            req["model"]["vad"] = args.vad == "on"
        if args.words is not None:
            req["word_timestamps"] = args.words == "on"
    return requests


def manifest(langs: list[str], max_files: int | None, max_s: float) -> list[dict]:
    out = []
    for lang in langs:
        files = [{"local_file": c.file, "lang": c.lang, "transcript": c.reference} for c in clips([lang])]
        if max_s < 1e9:  # decoding every file only to skip the long ones costs CPU: not when none is skipped
            files = [r for r in files if len(decode(str(TESTDATA / r["local_file"]))) <= max_s * SR]
        out += files[:max_files] if max_files else files
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--engine-root", default=str(ROOT), help="checkout whose engine/ is benchmarked (default: this)")
    ap.add_argument("--model", choices=["sommers", "whisper"], default="sommers",
                    help="registry entry the service would use (model_name); sommers is what users get")
    ap.add_argument("--domain", choices=["GENERAL", "CALL"], default="GENERAL", help="job domain (CALL: VAD off)")
    ap.add_argument("--config", default="{}", help="more job config fields (JSON), e.g. '{\"use_paragraph_splitter\": false}'")
    ap.add_argument("--beam", type=int, default=None, help="override the entry's beam size")
    ap.add_argument("--vad", choices=["on", "off"], default=None, help="override model.vad (default: the service's)")
    ap.add_argument("--words", choices=["on", "off"], default=None,
                    help="override word_timestamps (default: the service's; on with the paragraph splitter)")
    ap.add_argument("--langs", default="ko,ja,en")
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    ap.add_argument("--max-files", type=int, default=None, help="per language")
    ap.add_argument("--max-s", type=float, default=20.0, help="skip clips longer than this (the 60 s en calls)")
    ap.add_argument("--files", default=None, help="comma-separated testdata paths instead of --langs")
    ap.add_argument("--show", action="store_true", help="print each hypothesis that has an insertion or loop")
    ap.add_argument("--json", default=None, help="write per-file results here")
    ap.add_argument("--rescore", default=None, metavar="JSON",
                    help="print the table again from a --json file's transcripts (after a change to the scoring)")
    ap.add_argument("--plain", action="store_true",
                    help="also run the plain faster-whisper script; print words lost / invented against it per file")
    ap.add_argument("--audio-dir", default=None, help="also every .wav here, clean only, against the plain script")
    ap.add_argument("--audio-lang", default="en", help="language of --audio-dir's files")
    ap.add_argument("--repeats", default=None, help="a folder of build_repeats.py: copies said against written")
    ap.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE",
                    help="override a decoding option, e.g. phone_vad_threshold=0.5 (repeatable)")
    ap.add_argument("--compare", nargs=2, default=None, metavar=("BEFORE", "AFTER"),
                    help="print one before -> after table from --json files (rows both have; each side may be a comma-separated list)")
    args = ap.parse_args()
    if args.rescore:
        return rescore(Path(args.rescore))
    if args.compare:
        return compare(*([Path(p) for p in side.split(",")] for side in args.compare))
    decode_options = asdict(engine_under_test.decode_options(args.set))  # carried by the request's model entry
    if args.audio_dir:
        args.plain = True
    rows = manifest(args.langs.split(","), args.max_files, args.max_s) if args.langs else []
    if args.files:
        wanted = args.files.split(",")
        rows = [r for r in manifest(["ko", "ja", "en"], None, 1e9) if r["local_file"] in wanted]
    conditions = args.conditions.split(",")
    said_again = repeat_rows(Path(args.repeats)) if args.repeats else []
    langs_asked = ({r["lang"] for r in rows} | ({args.audio_lang} if args.audio_dir else set())
                   | {r["lang"] for r in said_again})
    requests = service_requests(args, sorted(langs_asked))
    for req in requests.values():
        req["model"] = {**req["model"], "decode": decode_options}
    print(f"engine {transcriber.__file__}; model {args.model}, domain {args.domain}, set {args.set}; "
          f"{len(rows)} clips x {len(conditions)} conditions", flush=True)
    for lang, req in requests.items():
        print(f"  {lang}: {json.dumps({k: v for k, v in req.items() if k != 'audio_path'}, ensure_ascii=False)}")
    settings = {"model": args.model, "domain": args.domain, "set": args.set, "requests": requests,
                "engine": str(Path(transcriber.__file__).resolve())}
    results = []
    table = []
    lost_total = {"files": 0, "sori": 0, "plain": 0, "lost": 0, "invented": 0}
    langs = sorted({r["lang"] for r in rows}, key=args.langs.split(",").index)
    with tempfile.TemporaryDirectory(prefix="robustness-") as tmp:
        clips = {r["local_file"]: decode(str(TESTDATA / r["local_file"])) for r in rows}
        for condition in conditions if rows else []:
            t0 = time.process_time()
            per_lang = {lang: {"edits": 0, "chars": 0, "ins": 0, "ins_ch": 0, "loops": 0, "files": 0} for lang in langs}
            for i, r in enumerate(rows):
                path = build(condition, clips[r["local_file"]], Path(tmp) / f"{i}.wav")
                req = parse_transcribe({**requests[r["lang"]], "audio_path": str(path)})  # model_name: ignored
                out = transcriber.transcribe(req, lambda _f: None)
                hyp = " ".join(s.text.strip() for s in out.segments)
                edits, ins_w, ins_c = inserted(r["transcript"], hyp, r["lang"])
                loops = int(any(looping(s.text) for s in out.segments)
                            or (looping(hyp) and not looping(r["transcript"])))
                acc = per_lang[r["lang"]]
                acc["edits"] += edits
                acc["chars"] += len(chars(r["transcript"], r["lang"]))
                acc["ins"] += ins_w
                acc["ins_ch"] += ins_c
                acc["loops"] += loops
                acc["files"] += 1
                results.append({"condition": condition, "file": r["local_file"], "hyp": hyp, "edits": edits,
                                "ins_words": ins_w, "ins_chars": ins_c, "loops": loops})
                if args.show and (ins_w or loops):
                    print(f"    {condition} {r['local_file']}: ins {ins_w} loops {loops}: {hyp}", flush=True)
                if args.plain:
                    results[-1].update(against_plain(condition, r["local_file"], path, req, hyp, lost_total))
            cpu = time.process_time() - t0
            row = {"condition": condition, "cpu_s": cpu, **{lang: per_lang[lang] for lang in langs}}
            table.append(row)
            cells = "  ".join(f"{lang} {a['edits'] / max(a['chars'], 1):.3f} {a['ins']:3d} {a['ins_ch']:4d} {a['loops']:2d}"
                              for lang, a in per_lang.items())
            print(f"{condition:15s} {cells}  cpu {cpu:6.1f}", flush=True)
            if args.json:  # after every condition, so a long run that is stopped keeps what it did
                Path(args.json).write_text(json.dumps({"settings": settings, "table": table, "files": results},
                                                      ensure_ascii=False, indent=1))
        if args.audio_dir:
            for path in sorted(Path(args.audio_dir).glob("*.wav")):
                req = parse_transcribe({**requests[args.audio_lang], "audio_path": str(path)})
                out = transcriber.transcribe(req, lambda _f: None)
                hyp = " ".join(s.text.strip() for s in out.segments)
                results.append({"condition": "audio-dir", "file": str(path), "hyp": hyp,
                                **against_plain("audio-dir", path.name, path, req, hyp, lost_total)})
        if said_again:
            results += repeats(Path(args.repeats), said_again, requests)
    print()
    if table:
        print_markdown(table, langs)
    if args.plain:
        t = lost_total
        print(f"\nagainst the plain script, {t['files']} files: sori {t['sori']} words, plain {t['plain']}; "
              f"lost {t['lost']} ({100 * t['lost'] / max(t['plain'], 1):.1f} %), invented {t['invented']} "
              f"({100 * t['invented'] / max(t['plain'], 1):.1f} %)")
    if args.json:
        Path(args.json).write_text(json.dumps({"settings": settings, "table": table, "files": results},
                                                      ensure_ascii=False, indent=1))


# ------------------------------------------------------------------------------------------------ repeats
DIGIT_WORDS = {w: str(i) for i, w in enumerate("zero one two three four five six seven eight nine".split())}


def repeat_rows(folder: Path) -> list[dict]:
    lines = (folder / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    return [dict(zip(lines[0].split("\t"), line.split("\t"), strict=True)) for line in lines[1:]]


def repeat_units(text: str, digits: bool) -> str:
    """What copies are counted in: the digits (number words read as digits), or the normal form's characters."""
    if digits:
        return "".join(DIGIT_WORDS.get(w, "".join(ch for ch in w if ch.isdigit())) for w in words(text))
    return chars(text)


def repeats(folder: Path, rows: list[dict], requests: dict) -> list[dict]:
    """Each file of a build_repeats.py folder by sori and by the plain script: copies said, written, lost, added."""
    out = []
    acc: dict[str, dict] = {}
    for r in rows:
        path = folder / r["file"]
        req = parse_transcribe({**requests[r["lang"]], "audio_path": str(path)})
        hyp = " ".join(s.text.strip() for s in transcriber.transcribe(req, lambda _f: None).segments)
        if "model" not in _PLAIN_MODEL:
            _PLAIN_MODEL["model"] = models.get_model(req.model).whisper
        segments, _ = _PLAIN_MODEL["model"].transcribe(str(path), language=req.language,
                                                       beam_size=req.model.beam_size, vad_filter=True)
        plain = " ".join(s.text.strip() for s in segments)
        digits = r["file"].startswith("digits_")
        ref, unit = repeat_units(r["reference"], digits), repeat_units(r["unit"], digits)
        said = round(len(ref) / len(unit))
        row = {"condition": "repeats", "file": r["file"], "split": r["split"], "said": said, "hyp": hyp,
               "plain": plain}
        a = acc.setdefault(f"{r['lang']} {r['split']}", {k: 0 for k in ("files", "said", "chars", "sori_edits",
                                                                       "plain_edits")})
        a["files"] += 1
        a["said"] += said
        a["chars"] += len(ref)
        for who, text in (("sori", hyp), ("plain", plain)):
            got = round(len(repeat_units(text, digits)) / len(unit))
            row[who] = text
            row[f"{who}_copies"] = got
            a[f"{who}_lost"] = a.get(f"{who}_lost", 0) + max(0, said - got)
            a[f"{who}_added"] = a.get(f"{who}_added", 0) + max(0, got - said)
            a[f"{who}_edits"] += edit_distance(ref, repeat_units(text, digits))
        print(f"    {r['file']} said {said} sori {row['sori_copies']} plain {row['plain_copies']}: {hyp}", flush=True)
        out.append(row)
    print("\n| set | files | copies said | sori lost / added | plain lost / added | sori CER | plain CER |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for key, a in sorted(acc.items()):
        print(f"| {key} | {a['files']} | {a['said']} | {a['sori_lost']} / {a['sori_added']} | "
              f"{a['plain_lost']} / {a['plain_added']} | {100 * a['sori_edits'] / a['chars']:.1f} % | "
              f"{100 * a['plain_edits'] / a['chars']:.1f} % |")
    return out


def lost_and_invented(plain: list[str], sori: list[str]) -> tuple[int, int]:
    """Words of the plain script's text that sori's lacks, and words of sori's the plain script's lacks, on a
    longest-matching-blocks alignment of the two word sequences (difflib)."""
    matched = sum(b.size for b in difflib.SequenceMatcher(a=plain, b=sori, autojunk=False).get_matching_blocks())
    return len(plain) - matched, len(sori) - matched


_PLAIN_MODEL: dict = {}


def plain_units(text: str, lang: str) -> list[str]:
    """What lost / invented count: the normal form's words, or its characters for text written without spaces."""
    units = words(text, lang)
    return list("".join(units)) if lang in ("ja", "zh") else units


def against_plain(condition: str, name: str, path: Path, req, hyp: str, total: dict) -> dict:
    """The plain faster-whisper script on `path` (same model, language and beam, its own VAD on), and sori's words
    lost / invented against it; printed, and added to `total`."""
    if "model" not in _PLAIN_MODEL:
        _PLAIN_MODEL["model"] = models.get_model(req.model).whisper  # the plain script: the same loaded model
    segments, _ = _PLAIN_MODEL["model"].transcribe(str(path), language=req.language, beam_size=req.model.beam_size,
                                                   vad_filter=True)
    plain = " ".join(s.text.strip() for s in segments)
    a, b = plain_units(plain, req.language), plain_units(hyp, req.language)
    lost, invented = lost_and_invented(a, b)
    for key, value in (("files", 1), ("sori", len(b)), ("plain", len(a)), ("lost", lost), ("invented", invented)):
        total[key] += value
    print(f"    {condition} {name}: words sori {len(b)} plain {len(a)} lost {lost} invented {invented}", flush=True)
    return {"plain": plain, "plain_words": len(a), "sori_words": len(b), "lost": lost, "invented": invented}


def score(data: dict) -> tuple[dict[str, dict], list[dict]]:
    """The per-condition table and per-file results of a --json file, scored again from its transcripts with this
    script's scoring (so figures taken before a scoring change compare with those after)."""
    refs = {r["local_file"]: r["transcript"] for r in manifest(["ko", "ja", "en"], None, 1e9)}
    cpu = {row["condition"]: row["cpu_s"] for row in data["table"]}
    table: dict[str, dict] = {}
    files = []
    for f in data["files"]:
        lang = f["file"].split("/")[0]
        row = table.setdefault(f["condition"], {"condition": f["condition"], "cpu_s": cpu.get(f["condition"], 0.0)})
        acc = row.setdefault(lang, {"edits": 0, "chars": 0, "ins": 0, "ins_ch": 0, "loops": 0, "files": 0})
        ref = refs[f["file"]]
        edits, ins_w, ins_c = inserted(ref, f["hyp"], lang)
        loops = int(f["loops"] > 0 or (looping(f["hyp"]) and not looping(ref)))
        acc["edits"] += edits
        acc["chars"] += len(chars(ref, lang))
        acc["ins"] += ins_w
        acc["ins_ch"] += ins_c
        acc["loops"] += loops
        acc["files"] += 1
        files.append({**f, "edits": edits, "ins_words": ins_w, "ins_chars": ins_c, "loops": loops})
    return table, files


def rescore(path: Path) -> None:
    table, _ = score(json.loads(path.read_text(encoding="utf-8")))
    langs = [k for k in next(iter(table.values())) if k not in ("condition", "cpu_s")]
    print_markdown(list(table.values()), langs)


def compare(before_paths: list[Path], after_paths: list[Path]) -> None:
    """Before -> after per condition: CER per language, inserted words (characters), looping outputs, CPU s; a total
    row (CER over all conditions' characters), the insertion reduction, and each output that still inserts or loops."""
    sides = [[score(json.loads(p.read_text(encoding="utf-8"))) for p in paths] for paths in (before_paths, after_paths)]
    before, after = ({c: row for table, _ in side for c, row in table.items()} for side in sides)
    conditions = [c for c in after if c in before]
    langs = [k for k in after[conditions[0]] if k not in ("condition", "cpu_s")]
    print("| condition | " + " | ".join(f"{lang} CER" for lang in langs) + " | ins words (chars) | loops | cpu s |")
    print("|---|" + "---|" * len(langs) + "---|---|---|")
    keys = ("ins", "ins_ch", "loops", "cpu_s")
    total = {side: {k: 0.0 for k in keys} | {lang: [0, 0] for lang in langs} for side in ("b", "a")}
    for c in conditions:
        sums = {}
        for side, row in (("b", before[c]), ("a", after[c])):
            sums[side] = {k: sum(row[lang][k] for lang in langs) for k in ("ins", "ins_ch", "loops")}
            sums[side]["cpu_s"] = row["cpu_s"]
            for k in keys:
                total[side][k] += sums[side][k]
            for lang in langs:
                total[side][lang][0] += row[lang]["edits"]
                total[side][lang][1] += row[lang]["chars"]
        print(_compare_row(c, [(before[c][lang]["edits"], before[c][lang]["chars"], after[c][lang]["edits"],
                                after[c][lang]["chars"]) for lang in langs], sums["b"], sums["a"]))
    tb, ta = total["b"], total["a"]
    print(_compare_row(f"**total ({len(conditions)})**", [(*tb[lang], *ta[lang]) for lang in langs], tb, ta))
    cut = 100 * (1 - ta["ins"] / tb["ins"]) if tb["ins"] else 0.0
    print(f"\n{len(conditions)} conditions: inserted words (chars) {tb['ins']:.0f} ({tb['ins_ch']:.0f}) → "
          f"{ta['ins']:.0f} ({ta['ins_ch']:.0f}), {cut:.0f} % fewer; looping outputs {tb['loops']:.0f} → {ta['loops']:.0f}")
    for name, side in (("before", sides[0]), ("after", sides[1])):
        for f in (f for _, files in side for f in files if f["condition"] in conditions):
            if f["ins_words"] or f["loops"]:
                print(f"  {name} {f['condition']} {f['file']}: ins {f['ins_words']} loops {f['loops']}: {f['hyp']}")


def _compare_row(name: str, cer: list[tuple[int, int, int, int]], b: dict, a: dict) -> str:
    cells = [f"{eb / max(cb, 1):.3f} → {ea / max(ca, 1):.3f}" for eb, cb, ea, ca in cer]
    return (f"| {name} | " + " | ".join(cells) + f" | {b['ins']:.0f} ({b['ins_ch']:.0f}) → {a['ins']:.0f} "
            f"({a['ins_ch']:.0f}) | {b['loops']:.0f} → {a['loops']:.0f} | {b['cpu_s']:.0f} → {a['cpu_s']:.0f} |")


def print_markdown(table: list[dict], langs: list[str]) -> None:
    head = " | ".join(f"{lang} CER / ins / ins-ch / loops" for lang in langs)
    print(f"| condition | {head} | cpu s |")
    print("|---|" + "---|" * len(langs) + "---|")
    total = {"ins": 0, "ins_ch": 0, "loops": 0}
    for row in table:
        cells = []
        for lang in langs:
            a = row[lang]
            cells.append(f"{a['edits'] / max(a['chars'], 1):.3f} / {a['ins']} / {a['ins_ch']} / {a['loops']}")
            for k in total:
                total[k] += a[k]
        print(f"| {row['condition']} | " + " | ".join(cells) + f" | {row['cpu_s']:.0f} |")
    print(f"\ntotal: inserted words {total['ins']}, inserted characters {total['ins_ch']}, looping segments "
          f"{total['loops']}")


if __name__ == "__main__":
    main()
