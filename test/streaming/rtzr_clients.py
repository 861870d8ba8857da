"""Drives the public RTZR streaming clients, installed from PyPI (make .venv-stream), against a sori server.

Each client is used as published; the only changes are its base URL and credentials, through the setting each
offers: pipecat-rtzr's `api_base` argument, and livekit-plugins-rtzr's client attributes `_api_base` and `_ws_base`
(rtzrapi.py, 1.8.9), the only way it offers. Credentials come from RTZR_CLIENT_ID / RTZR_CLIENT_SECRET.

Usage: python rtzr_clients.py livekit|pipecat BASE_URL AUDIO.raw SAMPLE_RATE [EPD_TIME]
AUDIO.raw is s16le mono; it is fed in 100 ms frames at real-time pace. Prints one JSON line per transcript event:
{"kind": "interim"|"final", "text": str, "t": seconds since the first frame}, then {"kind": "done"}.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time


def emit(kind: str, text: str, t0: float) -> None:
    print(json.dumps({"kind": kind, "text": text, "t": round(time.monotonic() - t0, 3)}, ensure_ascii=False), flush=True)


async def run_livekit(base: str, pcm: bytes, rate: int, epd: float) -> None:
    import aiohttp
    from livekit import rtc
    from livekit.agents import stt
    from livekit.plugins import rtzr

    async with aiohttp.ClientSession() as http:
        engine = rtzr.STT(model="sommers_ko", sample_rate=rate, domain="CALL", epd_time=epd, http_session=http)
        engine._client._api_base = base
        engine._client._ws_base = base.replace("http://", "ws://", 1).replace("https://", "wss://", 1)
        stream = engine.stream()
        t0 = time.monotonic()
        step = rate // 10 * 2  # 100 ms of s16

        async def feed() -> None:
            for i in range(0, len(pcm), step):
                chunk = pcm[i : i + step]
                if len(chunk) < step:
                    chunk = chunk + b"\0" * (step - len(chunk))
                stream.push_frame(rtc.AudioFrame(chunk, rate, 1, step // 2))
                await asyncio.sleep(max(0.0, t0 + (i + step) / (2 * rate) - time.monotonic()))
            stream.end_input()

        feeder = asyncio.create_task(feed())
        async for ev in stream:
            if ev.type == stt.SpeechEventType.INTERIM_TRANSCRIPT:
                emit("interim", ev.alternatives[0].text, t0)
            elif ev.type == stt.SpeechEventType.FINAL_TRANSCRIPT:
                emit("final", ev.alternatives[0].text, t0)
        await feeder
        await engine.aclose()


async def run_pipecat(base: str, pcm: bytes, rate: int, epd: float) -> None:
    from pipecat.frames.frames import (
        EndFrame,
        Frame,
        InputAudioRawFrame,
        InterimTranscriptionFrame,
        TranscriptionFrame,
    )
    from pipecat.pipeline.pipeline import Pipeline
    from pipecat.pipeline.runner import PipelineRunner
    from pipecat.pipeline.task import PipelineParams, PipelineTask
    from pipecat.processors.frame_processor import FrameDirection, FrameProcessor
    from pipecat_rtzr import RTZRSTTService

    t0 = time.monotonic()

    class Collect(FrameProcessor):
        async def process_frame(self, frame: Frame, direction: FrameDirection) -> None:
            await super().process_frame(frame, direction)
            if isinstance(frame, InterimTranscriptionFrame):
                emit("interim", frame.text, t0)
            elif isinstance(frame, TranscriptionFrame):
                emit("final", frame.text, t0)
            await self.push_frame(frame, direction)

    service = RTZRSTTService(
        api_base=base,
        sample_rate=rate,
        eos_flush_timeout=5.0,
        settings=RTZRSTTService.Settings(epd_time=epd),
    )
    task = PipelineTask(
        Pipeline([service, Collect()]),
        params=PipelineParams(audio_in_sample_rate=rate),
        idle_timeout_secs=None,
    )

    async def feed() -> None:
        await asyncio.sleep(1.0)  # the pipeline starts and connects
        nonlocal t0
        t0 = time.monotonic()
        step = rate // 10 * 2
        for i in range(0, len(pcm), step):
            chunk = pcm[i : i + step]
            await task.queue_frame(InputAudioRawFrame(audio=chunk, sample_rate=rate, num_channels=1))
            await asyncio.sleep(max(0.0, t0 + (i + step) / (2 * rate) - time.monotonic()))
        await asyncio.sleep(epd + 2.5)  # the last end point and its final
        await task.queue_frame(EndFrame())

    await asyncio.gather(PipelineRunner(handle_sigint=False).run(task), feed())


def main() -> None:
    client, base, path, rate = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    epd = float(sys.argv[5]) if len(sys.argv) > 5 else 0.5
    pcm = open(path, "rb").read()
    run = run_livekit if client == "livekit" else run_pipecat
    asyncio.run(run(base, pcm, rate, epd))
    print(json.dumps({"kind": "done"}), flush=True)


if __name__ == "__main__":
    main()
