"""The audio every stage holds: 16 kHz mono float32 in [-1, 1) (docs/audio.md). A leaf, importing nothing of the
package, so that any module can take the rate from here without importing a stage. media/child.py, run as a
standalone script, keeps its own copy (engine/tests/test_layering.py checks that the two agree)."""

from __future__ import annotations

SAMPLE_RATE = 16000
