"""The engine process runs BLAS on one thread unless the operator says otherwise (__main__.limit_blas_threads)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from sori_engine.__main__ import BLAS_THREAD_VARS

ENGINE = Path(__file__).resolve().parent.parent
# What the engine's main() does first, then NumPy and SciPy's BLAS loaded (diarization's clustering loads SciPy's).
PROBE = """
import json, threadpoolctl
from sori_engine.__main__ import limit_blas_threads
limit_blas_threads()
import numpy, scipy.linalg
print(json.dumps([i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]))
"""


def blas_threads(**env: str) -> list[int]:
    clean = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARS and k != "OMP_NUM_THREADS"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE], env={**clean, **env}, cwd=ENGINE, capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def test_every_blas_pool_runs_one_thread() -> None:
    threads = blas_threads()
    assert threads, "no BLAS library found"
    assert set(threads) == {1}


def test_a_thread_count_the_operator_set_is_kept() -> None:
    expected = min(2, os.cpu_count() or 1)  # OpenBLAS caps its pool at the host's cores
    assert set(blas_threads(OPENBLAS_NUM_THREADS="2")) == {expected}
