"""The engine's decoding, as stages (docs/engine.md, "Decoding stages"): `windows` (blocks to windows, speech regions
to chunks), `language`, `rounds` (batched decoding in rounds, across jobs), `placement` (times back to the file), and
`window_segments` (stages 2-5 for one window), with every tunable in `sori_engine.decode_options` and the speech
model behind `sori_engine.model`; the checks of decoded output are `sori_engine.verdicts`. `transcriber.transcribe`
runs them in order."""
