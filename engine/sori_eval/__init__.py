"""What the tests and benchmarks measure with: one normal form and its error rates (`scoring`), the shared test
audio's references (`testdata`), a WAV writer (`wav`) and the choice of the engine under test (`engine_under_test`).

Not part of the engine package (nothing here runs in a job); it sits beside it so that `engine/tests` (cwd `engine/`)
and `bench/` (which put `engine/` on `sys.path`) import the same code. Its TypeScript twin is `test/helpers/cer.ts`;
both are checked against `test/fixtures/scoring-vectors.json`.
"""
