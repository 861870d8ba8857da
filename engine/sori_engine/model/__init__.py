"""The speech model behind one interface (`interface.SpeechModel`) and its one backend, faster-whisper on
CTranslate2 (`faster_whisper_backend`); docs/engine.md, "The model interface"."""
