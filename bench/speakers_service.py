#!/usr/bin/env python3
"""Known speakers as a client sees them: `bench/speakers.py --voices`'s conversations through `sori serve` and its
HTTP API. Each conversation's enrolled speakers (one or two, the same choice as speakers.py) are enrolled with
`POST /v1/speakers` from their two enrollment clips (once per speaker; a refused enrollment counts as never
enrolled), the conversation is submitted with `use_diarization` and `speaker_identification` naming them, and each
utterance's `spk_name` is scored against the reference speaker who talks most in it: the share of the enrolled
speakers' speech named right (and wrongly), and of the never-enrolled speakers' speech given any name.

    flock ~/.sori-bench.lock .venv/bin/python bench/speakers_service.py --voices ../voices --cache /tmp/conv2 \\
      --part held --limit 12

Run from the repository root after `make build`, and after `bench/speakers.py --voices` has written the
conversations' WAVs into the cache folder. It starts its own server on a temporary data folder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "engine"))

from sori_eval.voices import conversations, read_voices, split  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--voices", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True, help="where bench/speakers.py wrote the conversations' WAVs")
    ap.add_argument("--part", default="held", choices=["tune", "held"])
    ap.add_argument("--limit", type=int, default=12, help="the first N conversations of 2 speakers or more")
    ap.add_argument("--port", type=int, default=8766)
    args = ap.parse_args()

    data = Path(tempfile.mkdtemp(prefix="sori-speakers-service-"))
    env = {**os.environ, "SORI_DATA_DIR": str(data), "SORI_PORT": str(args.port), "SORI_SPEAKERS": "1",
           "SORI_WORKERS": "1", "SORI_POLL_MS": "200"}
    sori = str(ROOT / "bin" / "sori")
    made = subprocess.run([sori, "clients", "create", "--name", "speakers-bench"], env=env, capture_output=True, text=True, check=True).stdout
    cred = dict(line.replace(" ", "").split(":", 1) for line in made.splitlines() if line.startswith("client_"))
    server = subprocess.Popen([sori, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{args.port}"
    try:
        for _ in range(120):
            try:
                r = requests.post(f"{url}/v1/authenticate", data=cred, timeout=5)
                if r.status_code == 200:
                    break
            except requests.ConnectionError:
                pass
            time.sleep(1)
        auth = {"authorization": f"Bearer {r.json()['access_token']}"}
        parts = split(read_voices(args.voices), 0.4)
        ids: dict[str, str | None] = {}
        right = wrong = total_e = named_s = total_s = 0.0
        t0 = time.perf_counter()
        done = 0
        for i, conv in enumerate(conversations(parts[args.part], args.part, 48, 56)):
            if len(conv.speakers) < 2 or done >= args.limit:
                continue
            wav = args.cache / f"{conv.name}.wav"
            if not wav.exists():
                print(f"{conv.name}: no WAV in the cache (run bench/speakers.py --voices first)")
                continue
            for s in conv.speakers[: 1 if i % 2 == 0 else 2]:
                if s.key not in ids:
                    files = [("file", (Path(f).name, Path(f).read_bytes())) for f in s.enroll]
                    r = requests.post(f"{url}/v1/speakers", headers=auth, data={"name": s.key}, files=files,
                                      timeout=600)
                    ids[s.key] = r.json()["id"] if r.status_code == 200 else None
            enrolled = {s.key for s in conv.speakers[: 1 if i % 2 == 0 else 2] if ids.get(s.key)}
            if not enrolled:
                continue
            config = {"use_diarization": True, "speaker_identification": {"speakers": [ids[k] for k in enrolled]}}
            with open(wav, "rb") as f:
                r = requests.post(f"{url}/v1/transcribe", headers=auth, files={"file": (wav.name, f)},
                                  data={"config": json.dumps(config)}, timeout=60)
            job = r.json()["id"]
            while True:
                body = requests.get(f"{url}/v1/transcribe/{job}", headers=auth, timeout=30).json()
                if body["status"] in ("completed", "failed"):
                    break
                time.sleep(1)
            if body["status"] != "completed":
                print(f"{conv.name}: {body}")
                continue
            time_of: dict[str, list[float]] = {}
            for u in body["results"]["utterances"]:
                a, b = u["start_at"] / 1000, (u["start_at"] + u["duration"]) / 1000
                who = max(conv.ref, key=lambda x: min(b, x[1]) - max(a, x[0]))
                if min(b, who[1]) - max(a, who[0]) <= 0:
                    continue
                t = time_of.setdefault(who[2], [0.0, 0.0, 0.0])
                t[0] += b - a
                if u.get("spk_name") == who[2]:
                    t[1] += b - a
                elif "spk_name" in u:
                    t[2] += b - a
            line = []
            for key, (tot, ok, bad) in time_of.items():
                if key in enrolled:
                    right, wrong, total_e = right + ok, wrong + bad, total_e + tot
                else:
                    named_s, total_s = named_s + ok + bad, total_s + tot
                line.append(f"{key}{'*' if key in enrolled else ''} {ok / tot:.0%}/{bad / tot:.0%}")
            done += 1
            print(f"{conv.name:24} " + ", ".join(line), flush=True)
        print(f"{args.part}: {done} conversations through the API, enrolled speakers' speech named right "
              f"{right / max(total_e, 1e-9):.1%}, wrongly {wrong / max(total_e, 1e-9):.1%}; never-enrolled speakers' "
              f"speech named {named_s / max(total_s, 1e-9):.2%}; wall {time.perf_counter() - t0:.0f} s")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
