"""schemathesis hooks for test/security/schemathesis.test.ts (loaded through SCHEMATHESIS_HOOKS).

An upload's `file` part must be audio in a supported format: a rule about the bytes, which a schema cannot state
(the document says so in words). schemathesis sends an image or random bytes there, which the server rightly refuses
with 400 H0010; so in every case it generates as valid, the file part becomes real speech (SORI_ST_AUDIO), and the
submits and enrollments succeed, which also gives the stateful phase real ids to follow. Two values that depend on
stored state are replaced too (see below); test/security/schemathesis.test.ts names every exception and why.
"""

import os

import schemathesis

AUDIO = open(os.environ["SORI_ST_AUDIO"], "rb").read()  # noqa: SIM115 - read once at load
# POST /v1/audio/transcriptions is left out: it waits for the transcript, and the test server has no workers.
UPLOADS = {"/v1/transcribe", "/v1/speakers", "/v1/speakers/{id}/audio"}


@schemathesis.hook
def filter_case(ctx, case):  # type: ignore[no-untyped-def]
    # POST /v1/audio/transcriptions waits for the transcript, and the test server has no workers: only its cases
    # generated as invalid are sent (a valid one would be a 400 H0010 for its non-audio file, or wait to the timeout).
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    return negative or not (case.method.upper() == "POST" and case.path == "/v1/audio/transcriptions")


@schemathesis.hook
def map_case(ctx, case):  # type: ignore[no-untyped-def]
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if negative:
        return case
    if case.method.upper() == "POST" and case.path in UPLOADS and isinstance(case.body, dict):
        if "file" in case.body:
            case.body["file"] = AUDIO
        # Which speakers exist is stored state: an empty list means all of the caller's (docs/speakers.md).
        config = case.body.get("config")
        if isinstance(config, dict) and isinstance(config.get("speaker_identification"), dict):
            config["speaker_identification"]["speakers"] = []
    # Whether a job asked for refinement is stored state: result=refined of one that did not is 400 H0001.
    if case.method.upper() == "GET" and case.path == "/v1/transcribe/{id}" and isinstance(case.query, dict):
        case.query.pop("result", None)
    return case
