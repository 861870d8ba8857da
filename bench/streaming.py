"""Streaming latency, accuracy and flicker at real-time pace (docs/streaming.md, "Figures").

Runs N sessions at once against a running `sori serve` (SORI_STREAM_SESSIONS >= N), each feeding an 8 kHz copy of
a shared clip in 100 ms frames at real-time pace over GET /v1/transcribe:streaming, optionally with a batch job
submitted beside them. The sessions start together, so their utterances all end at once (every final due in the
same step: the worst case); `--stagger S` starts session i i*S seconds after the first. Run it with the test
virtualenv's Python (make .venv-stream; it needs aiohttp and PyAV's numpy only through the engine's venv for the
copies):

  RTZR_CLIENT_ID=.. RTZR_CLIENT_SECRET=.. .venv-stream/bin/python bench/streaming.py --url http://127.0.0.1:8000 \\
      --sessions 4 --audio multi/deeply_ko_dialogue_constructed.wav --batch --server-pid PID

Latencies are measured from the answers' own times (ms from the session's start, t0 = the first frame sent):
- final: received - (speech end + epd_time), speech end = start_at + duration - 0.4 s (the engine's padding);
- first interim: received - speech start, speech start = start_at + 0.8 s (at most; less at the session's start).
Flicker: over consecutive hypotheses of one utterance (interims then its final), the words (characters in
Japanese) of the earlier one that the later one does not keep as its prefix, over all words shown.
CPU: utime + stime of the server process and all its descendants (the engines) over the run, from /proc.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

import aiohttp

PAD_S = 0.4  # the engine decodes this much after an utterance's last speech frame
LEAD_S = 0.8  # ... and this much before its first (streaming.py), unless the buffer starts later; --lead
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "engine"))  # sori_eval (standard library only: runs in .venv-stream)
from sori_eval import scoring, testdata  # noqa: E402
from sori_eval.proc import tree_cpu_s  # noqa: E402
from sori_eval.testdata import TESTDATA  # noqa: E402


def phone_copy(src: Path, rate: int) -> bytes:
    script = (
        "import sys, av, numpy as np\n"
        "out=[]; r=av.AudioResampler(format='s16', layout='mono', rate=int(sys.argv[2]))\n"
        "c=av.open(sys.argv[1])\n"
        "for f in c.decode(audio=0): out.extend(g.to_ndarray()[0] for g in r.resample(f))\n"
        "out.extend(g.to_ndarray()[0] for g in r.resample(None))\n"
        "sys.stdout.buffer.write(np.concatenate(out).astype('<i2').tobytes())\n"
    )
    return subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-c", script, str(src), str(rate)],
        check=True,
        capture_output=True,
    ).stdout


def reference(clip: str) -> tuple[str, str]:
    """(language, reference text) of a shared clip: its .stm transcript where there is one, else the manifest's."""
    row = next((c for c in testdata.manifest(TESTDATA) if c.file == clip), None)
    lang = row.lang if row else ""
    stm = (TESTDATA / clip).with_suffix(".stm")
    if stm.exists():
        return lang, " ".join(" ".join(line.split(" ")[5:]) for line in stm.read_text().splitlines() if line.strip())
    return lang, row.reference if row else ""


def units(text: str, model: str) -> list[str]:
    """What flicker counts: words, or characters (punctuation left out) in Japanese, which has no spaces."""
    if model == "sommers_ja":
        return [c for c in text if unicodedata.category(c)[0] not in "PSZ" and not c.isspace()]
    return text.split()


async def token(http: aiohttp.ClientSession, url: str) -> str:
    form = {
        "client_id": os.environ["RTZR_CLIENT_ID"],
        "client_secret": os.environ["RTZR_CLIENT_SECRET"],
    }
    async with http.post(f"{url}/v1/authenticate", data=form) as r:
        return (await r.json())["access_token"]


async def session(
    http: aiohttp.ClientSession,
    url: str,
    tok: str,
    pcm: bytes,
    rate: int,
    epd: float,
    model: str = "sommers_ko",
    lead: float = LEAD_S,
    start_after: float = 0.0,
) -> dict:
    await asyncio.sleep(start_after)
    query = f"sample_rate={rate}&encoding=LINEAR16&model_name={model}&domain=CALL&epd_time={epd}"
    ws_url = url.replace("http", "ws", 1) + f"/v1/transcribe:streaming?{query}"
    answers: list[tuple[float, dict]] = []
    async with http.ws_connect(ws_url, headers={"Authorization": f"bearer {tok}"}, max_msg_size=0) as ws:
        t0 = time.monotonic()
        step = rate // 10 * 2

        async def feed() -> None:
            for i in range(0, len(pcm), step):
                await ws.send_bytes(pcm[i : i + step])
                await asyncio.sleep(max(0.0, t0 + (i + step) / (2 * rate) - time.monotonic()))
            await ws.send_str("EOS")

        feeder = asyncio.create_task(feed())
        async for msg in ws:
            if msg.type == aiohttp.WSMsgType.TEXT:
                answers.append((time.monotonic() - t0, json.loads(msg.data)))
        await feeder
        audio_end = len(pcm) / (2 * rate)
    finals, first_interims, flicker_changed, flicker_shown = [], [], 0, 0
    final_at: list[float] = []  # where in the audio (0..1) each final's end point lies
    by_seq: dict[int, list[tuple[float, dict]]] = {}
    for t, a in answers:
        if "seq" in a:
            by_seq.setdefault(a["seq"], []).append((t, a))
    for items in by_seq.values():
        final = [x for x in items if x[1]["final"]]
        interims = [x for x in items if not x[1]["final"]]
        if interims:
            t, a = interims[0]
            first_interims.append(t - (a["start_at"] / 1000 + lead))
        if final:
            t, a = final[0]
            speech_end = (a["start_at"] + a["duration"]) / 1000 - PAD_S
            if speech_end + epd < audio_end:  # an utterance cut by EOS has no end point
                finals.append(t - (speech_end + epd))
                final_at.append(speech_end / audio_end)
        hyps = [units(x[1]["alternatives"][0]["text"], model) for x in items]
        for before, after in itertools.pairwise(hyps):
            keep = 0
            while keep < min(len(before), len(after)) and before[keep] == after[keep]:
                keep += 1
            flicker_changed += len(before) - keep
            flicker_shown += len(before)
    text = " ".join(a["alternatives"][0]["text"] for _, a in answers if a.get("final"))
    return {
        "final_latency": finals,
        "final_at": final_at,
        "first_interim_latency": first_interims,
        "flicker": (flicker_changed, flicker_shown),
        "text": text,
        "answers": len(answers),
        "wall_after_audio": answers[-1][0] - audio_end if answers else None,
        "all": [
            (round(t, 2), a.get("seq"), a.get("final"), a["alternatives"][0]["text"]) for t, a in answers if "seq" in a
        ],
    }


async def batch_job(http: aiohttp.ClientSession, url: str, tok: str, path: Path, language: str) -> dict:
    form = aiohttp.FormData()
    form.add_field(
        "config",
        json.dumps({"model_name": "sommers", "language": language, "domain": "CALL"}),
    )
    form.add_field("file", path.read_bytes(), filename=path.name)
    t0 = time.monotonic()
    async with http.post(f"{url}/v1/transcribe", data=form, headers={"Authorization": f"bearer {tok}"}) as r:
        job = (await r.json())["id"]
    while True:
        await asyncio.sleep(1)
        async with http.get(f"{url}/v1/transcribe/{job}", headers={"Authorization": f"bearer {tok}"}) as r:
            body = await r.json()
        if body["status"] != "transcribing":
            text = " ".join(u["msg"] for u in body.get("results", {}).get("utterances", []))
            return {
                "status": body["status"],
                "seconds": time.monotonic() - t0,
                "text": text,
            }


async def latency_buckets(http: aiohttp.ClientSession, url: str) -> dict[str, list[tuple[float, float]]]:
    """The server's sori_stream_latency_seconds histogram: {kind: [(le, cumulative count)]}."""
    out: dict[str, list[tuple[float, float]]] = {}
    async with http.get(f"{url}/metrics") as r:
        body = await r.text()
    for line in body.splitlines():
        if line.startswith("sori_stream_latency_seconds_bucket{"):
            labels, value = line.split("} ")
            kind = labels.split('kind="')[1].split('"')[0]
            le = labels.split('le="')[1].split('"')[0]
            out.setdefault(kind, []).append((float("inf") if le == "+Inf" else float(le), float(value)))
    return out


def bucket_quantiles(before: list[tuple[float, float]], after: list[tuple[float, float]]) -> dict:
    """n, p50 and p95 of the observations made between two reads of a histogram, interpolated in the buckets
    (as Prometheus's histogram_quantile does)."""
    counts = [(le, a - dict(before).get(le, 0.0)) for le, a in after]
    n = counts[-1][1] if counts else 0
    out: dict = {"n": int(n)}
    for name, q in (("p50", 0.5), ("p95", 0.95)):
        rank, lo, below = q * n, 0.0, 0.0
        out[name] = None
        for le, c in counts:
            if c >= rank and n:
                top = lo * 2 if le == float("inf") else le
                out[name] = round(lo + (top - lo) * ((rank - below) / max(c - below, 1e-9)), 3)
                break
            lo, below = le, c
    return out


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, round(q * (len(values) - 1)))], 3)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:8000")
    ap.add_argument("--sessions", type=int, default=1)
    ap.add_argument("--audio", default="multi/deeply_ko_dialogue_constructed.wav")
    ap.add_argument("--rate", type=int, default=8000)
    ap.add_argument("--epd", type=float, default=0.5)
    ap.add_argument(
        "--batch",
        action="store_true",
        help="submit the clip as a batch job beside the sessions",
    )
    ap.add_argument("--server-pid", type=int, default=0)
    ap.add_argument(
        "--stagger",
        type=float,
        default=0.0,
        help="session i starts i times this many seconds after the first (0: all at once, their finals due together)",
    )
    ap.add_argument("--model", default="sommers_ko", help="model_name: sommers_ko, sommers_ja")
    ap.add_argument("--texts", action="store_true", help="print each session's finals too")
    ap.add_argument(
        "--lead",
        type=float,
        default=LEAD_S,
        help="the engine's LEAD_S (0.4 before it was raised)",
    )
    ap.add_argument(
        "--answers",
        action="store_true",
        help="print the first session's answers (time, seq, final, text)",
    )
    args = ap.parse_args()
    src = TESTDATA / args.audio
    pcm = phone_copy(src, args.rate)
    lang, ref = reference(args.audio)
    cpu0, wall0 = (
        (tree_cpu_s(args.server_pid) if args.server_pid else 0.0),
        time.monotonic(),
    )
    async with aiohttp.ClientSession() as http:
        tok = await token(http, args.url)
        hist0 = await latency_buckets(http, args.url)
        jobs = [
            session(http, args.url, tok, pcm, args.rate, args.epd, args.model, args.lead, i * args.stagger)
            for i in range(args.sessions)
        ]
        if args.batch:
            jobs.append(
                batch_job(
                    http,
                    args.url,
                    tok,
                    src,
                    "ja" if args.model == "sommers_ja" else "ko",
                )
            )
        results = await asyncio.gather(*jobs)
        hist1 = await latency_buckets(http, args.url)
    sessions = results[: args.sessions]
    # A backlog that grows shows as finals later and later in the audio: the client-side p50 by third.
    thirds = [
        pct(
            [lat for s in sessions for lat, at in zip(s["final_latency"], s["final_at"]) if k / 3 <= at < (k + 1) / 3],
            0.5,
        )
        for k in range(3)
    ]
    finals = [x for s in sessions for x in s["final_latency"]]
    firsts = [x for s in sessions for x in s["first_interim_latency"]]
    changed = sum(s["flicker"][0] for s in sessions)
    shown = sum(s["flicker"][1] for s in sessions)
    out = {
        "audio": args.audio,
        "audio_s": round(len(pcm) / (2 * args.rate), 1),
        "sessions": args.sessions,
        "epd_time": args.epd,
        "final_latency_s": {
            "n": len(finals),
            "p50": pct(finals, 0.5),
            "p95": pct(finals, 0.95),
            "max": pct(finals, 1),
        },
        "first_interim_latency_s": {
            "n": len(firsts),
            "p50": pct(firsts, 0.5),
            "p95": pct(firsts, 0.95),
            "max": pct(firsts, 1),
            # With one session there are a dozen utterances: p95 is near the slowest, so show them all.
            "each": sorted(round(x, 2) for x in firsts) if args.sessions == 1 else None,
        },
        "final_latency_p50_by_third_s": thirds,
        # The server's own times (sori_stream_latency_seconds): first interim from the arrival of the utterance's
        # first speech frame, final from the arrival of the audio that decided the end point; bucket-interpolated.
        "server_latency_s": {k: bucket_quantiles(hist0.get(k, []), v) for k, v in hist1.items()},
        "flicker": round(changed / shown, 3) if shown else None,
        "streaming_cer": [round(scoring.cer(s["text"], ref, lang), 3) for s in sessions],
        "last_answer_after_audio_end_s": [round(s["wall_after_audio"], 2) for s in sessions if s["wall_after_audio"]],
        "wall_s": round(time.monotonic() - wall0, 1),
    }
    if args.server_pid:
        out["server_cpu_s"] = round(tree_cpu_s(args.server_pid) - cpu0, 1)
    if args.batch:
        b = results[-1]
        out["batch"] = {
            "status": b["status"],
            "seconds": round(b["seconds"], 1),
            "cer": round(scoring.cer(b["text"], ref, lang), 3),
        }
    if args.texts:
        out["texts"] = [s["text"] for s in sessions]
    if args.answers:
        out["answers"] = sessions[0]["all"]
    print(json.dumps(out, ensure_ascii=False, indent=1))


if __name__ == "__main__":
    asyncio.run(main())
