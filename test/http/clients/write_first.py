"""A client that writes its whole request before it reads the answer: Python's urllib, as many SDKs do.

Usage: write_first.py URL BYTES [TOKEN]. Posts a multipart submit (config {} and BYTES of noise as the file) and prints
one JSON line: {"status": ..., "body": ...} for an answer, {"error": "..."} when the answer could not be read.
"""

import json
import os
import sys
import urllib.error
import urllib.request

url, size = sys.argv[1], int(sys.argv[2])
token = sys.argv[3] if len(sys.argv) > 3 else "not-a-token"
boundary = "sori-write-first"
head = (
    f'--{boundary}\r\nContent-Disposition: form-data; name="config"\r\n\r\n{{}}\r\n'
    f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.wav"\r\n'
    "Content-Type: application/octet-stream\r\n\r\n"
).encode()
body = head + os.urandom(size) + f"\r\n--{boundary}--\r\n".encode()
req = urllib.request.Request(
    url,
    data=body,
    method="POST",
    headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "Authorization": f"Bearer {token}"},
)
try:
    with urllib.request.urlopen(req, timeout=60) as r:
        print(json.dumps({"status": r.status, "body": json.loads(r.read())}))
except urllib.error.HTTPError as e:
    print(json.dumps({"status": e.code, "body": json.loads(e.read())}))
except Exception as e:  # noqa: BLE001 - any transport failure is the finding
    print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
