"""RTZR's gRPC streaming client as its Python tutorial writes it (vito-ai/python-tutorial,
python-stt-sample/src/stream_stt.py, `transcribe_streaming_grpc`), against sori's gRPC service.

The tutorial imports `vito_stt_client_pb2` / `_pb2_grpc`, which it does not ship: they are generated here from
proto/vito-stt-client.proto with grpcio-tools, under the names the tutorial imports. The calls are the tutorial's:
a TLS channel (`grpc.ssl_channel_credentials`; here trusting the test's own certificate instead of the system's
roots), the token as `grpc.access_token_call_credentials`, `OnlineDecoderStub.Decode` over an iterator that yields
the config and then the audio, results read from `resp.results`. Changed: the server address and the certificate,
the microphone replaced by a file fed in 100 ms chunks at real-time pace, and `keywords` left out of the config (the
published descriptor has no such field).

Usage: python rtzr_grpc.py API_BASE GRPC_TARGET ROOT_CERT AUDIO.raw SAMPLE_RATE
Prints one JSON line per result, {"kind": "interim"|"final", "text", "t", "start_at", "duration"}, then
{"kind": "done"}; a failed call prints {"kind": "error", "status": name, "details": str} and exits 3.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

import grpc
from grpc_tools import protoc

PROTO = Path(__file__).resolve().parents[2] / "proto" / "vito-stt-client.proto"


def generated_modules() -> tuple[object, object]:
    out = tempfile.mkdtemp(prefix="rtzr-grpc-")
    # The tutorial's module names: vito_stt_client_pb2, vito_stt_client_pb2_grpc.
    Path(out, "vito_stt_client.proto").write_bytes(PROTO.read_bytes())
    include = str(Path(protoc.__file__).parent / "_proto")
    if protoc.main(["protoc", f"-I{out}", f"-I{include}", f"--python_out={out}", f"--grpc_python_out={out}",
                    str(Path(out, "vito_stt_client.proto"))]) != 0:
        raise SystemExit("protoc failed")
    sys.path.insert(0, out)
    import vito_stt_client_pb2 as pb
    import vito_stt_client_pb2_grpc as pb_grpc

    return pb, pb_grpc


def token(api_base: str) -> str:
    form = urllib.parse.urlencode(
        {"client_id": os.environ["RTZR_CLIENT_ID"], "client_secret": os.environ["RTZR_CLIENT_SECRET"]}
    ).encode()
    with urllib.request.urlopen(api_base + "/v1/authenticate", data=form) as resp:
        return json.load(resp)["access_token"]


def main() -> int:
    api_base, target, cert, path, rate = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
    pb, pb_grpc = generated_modules()
    pcm = Path(path).read_bytes()
    step = rate // 10 * 2  # 100 ms of s16
    t0 = time.monotonic()

    def req_iterator():  # the tutorial's, the microphone replaced by the file
        yield pb.DecoderRequest(
            streaming_config=pb.DecoderConfig(
                sample_rate=rate,
                encoding=pb.DecoderConfig.AudioEncoding.LINEAR16,
                use_itn=True,
                use_disfluency_filter=False,
                use_profanity_filter=False,
            )
        )
        for i in range(0, len(pcm), step):
            yield pb.DecoderRequest(audio_content=pcm[i : i + step])
            time.sleep(max(0.0, t0 + (i + step) / (2 * rate) - time.monotonic()))

    creds = grpc.ssl_channel_credentials(root_certificates=Path(cert).read_bytes())
    with grpc.secure_channel(target, credentials=creds) as channel:
        stub = pb_grpc.OnlineDecoderStub(channel)
        cred = grpc.access_token_call_credentials(token(api_base))
        try:
            for resp in stub.Decode(req_iterator(), credentials=cred):
                for res in resp.results:
                    line = {
                        "kind": "final" if res.is_final else "interim",
                        "text": res.alternatives[0].text,
                        "t": round(time.monotonic() - t0, 3),
                        "start_at": res.start_at,
                        "duration": res.duration,
                    }
                    print(json.dumps(line, ensure_ascii=False), flush=True)
        except grpc.RpcError as e:
            print(json.dumps({"kind": "error", "status": e.code().name, "details": e.details()}), flush=True)
            return 3
    print(json.dumps({"kind": "done"}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
