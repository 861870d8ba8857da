"""sori inference engine: faster-whisper behind a JSON-lines protocol (see docs/engine.md)."""

__version__ = "0.1.0"
