"""submit -> read -> export through the client openapi-python-client generated from /openapi.json (package sori_client,
on PYTHONPATH). Usage: generated_client.py BASE_URL CLIENT_ID CLIENT_SECRET AUDIO. Prints one JSON line."""

import json
import sys
import time

from sori_client import AuthenticatedClient, Client
from sori_client.api.default import (
    get_v1_transcribe_id,
    get_v1_transcribe_id_export,
    post_v1_transcribe,
)
from sori_client.models import Config, JobCompleted, PostV1TranscribeBody
from sori_client.types import File

base, client_id, secret, audio = sys.argv[1:5]
# The generated post_v1_authenticate does not import (openapi-python-client 0.29.1 leaves `Unset` unimported for a
# body under two media types); the token is asked through the generated client's own HTTP client instead.
auth = Client(base_url=base).get_httpx_client().post(
    "/v1/authenticate", data={"client_id": client_id, "client_secret": secret}
)
client = AuthenticatedClient(base_url=base, token=auth.json()["access_token"], timeout=60)
with open(audio, "rb") as f:
    body = PostV1TranscribeBody(config=Config(), file=File(payload=f, file_name="jfk.flac"))
    queued = post_v1_transcribe.sync(client=client, body=body)
job_id = queued.id
deadline = time.time() + 150
job = get_v1_transcribe_id.sync(client=client, id=job_id)
while not (isinstance(job, JobCompleted) or getattr(job, "status", None) == "failed") and time.time() < deadline:
    time.sleep(1)
    job = get_v1_transcribe_id.sync(client=client, id=job_id)
export = get_v1_transcribe_id_export.sync_detailed(client=client, id=job_id)
print(
    json.dumps(
        {
            "id": job_id,
            "status": job.status if hasattr(job, "status") else str(job),
            "utterances": len(job.results.utterances) if isinstance(job, JobCompleted) else None,
            "export_status": int(export.status_code),
            "export": export.content.decode("utf8", "replace")[:200],
        }
    )
)
