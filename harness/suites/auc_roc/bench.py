"""`kata bench auc_roc`: roc_auc_score against scikit-learn's, on 10^6 and 10^7 samples."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.bench import Table


def _seconds(fn, *args) -> float:
    start = time.perf_counter()
    fn(*args)
    return time.perf_counter() - start


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    from sklearn.metrics import roc_auc_score

    table = Table("samples", "scores", "impl s", "sklearn s", "ratio (goal <= 0.6)")
    rng = np.random.default_rng(0)
    for n in [10**5] if quick else [10**6, 10**7]:
        y = rng.integers(0, 2, n)
        for kind, score in [("distinct", rng.random(n)), ("tied", rng.integers(0, 100, n) * 1.0)]:
            impl.roc_auc_score(y[:1000], score[:1000])  # warm up both before timing
            roc_auc_score(y[:1000], score[:1000])
            ours, theirs = _seconds(impl.roc_auc_score, y, score), _seconds(roc_auc_score, y, score)
            table.add(f"{n:.0e}", kind, f"{ours:.3f}", f"{theirs:.3f}", f"{ours / theirs:.2f}x")
    return table
