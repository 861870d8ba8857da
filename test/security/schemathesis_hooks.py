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


# The server bounds a form's parts (64 text parts, 80 in all; docs/api.md): a case keeps this many unknown names
# (each may repeat as an array), well inside the bound.
MAX_EXTRA_PARTS = 8
# The multipart parser refuses parts named after Object.prototype's members (400 H0001, docs/api.md).
PROTOTYPE_NAMES = {
    "constructor", "__defineGetter__", "__defineSetter__", "hasOwnProperty", "__lookupGetter__", "__lookupSetter__",
    "isPrototypeOf", "propertyIsEnumerable", "toString", "valueOf", "__proto__", "toLocaleString",
}


def _without_prototype_keys(value):  # type: ignore[no-untyped-def]
    """The value less `__proto__` keys and `constructor` keys holding a `prototype`, at any depth: the server refuses
    them in JSON parts (secure-json-parse's rule, docs/api.md), which a schema of open objects cannot state."""
    if isinstance(value, dict):
        return {
            k: _without_prototype_keys(v)
            for k, v in value.items()
            if k != "__proto__" and not (k == "constructor" and isinstance(v, dict) and "prototype" in v)
        }
    if isinstance(value, list):
        return [_without_prototype_keys(v) for v in value]
    return value


@schemathesis.hook
def map_case(ctx, case):  # type: ignore[no-untyped-def]
    negative = case.meta is not None and case.meta.generation.mode.is_negative
    if negative:
        return case
    if case.method.upper() == "POST" and case.path in UPLOADS and isinstance(case.body, dict):
        # Changed in place: with the body replaced, schemathesis checked these cases as invalid ones (ST201).
        known = {"config", "file", "name"}
        extra = [k for k in case.body if k not in known and k not in PROTOTYPE_NAMES][:MAX_EXTRA_PARTS]
        for k in list(case.body):
            if k not in known and k not in extra:
                del case.body[k]
            elif k != "file":
                case.body[k] = _without_prototype_keys(case.body[k])
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
