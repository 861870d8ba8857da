"""Untrusted media: probing and decoding in a short-lived, confined process per file (sandbox.py, child.py)."""
