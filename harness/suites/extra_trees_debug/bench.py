"""`kata bench extra_trees_debug`: fit + predict time against scikit-learn's ExtraTreesClassifier
(n_jobs=1), 20,000 training rows of 20 features, 10 and 50 trees, with both accuracies.

Times are CPU seconds of this process (both sides run on one thread): steadier than wall time on
a shared machine. The ratios come from one run.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from harness.bench import Table, pyplot, save_plots


def _run(cls, n_trees: int, X, y, X_test, y_test) -> tuple[float, float, float]:
    """(fit s, predict s, test accuracy) of one forest."""
    start = time.process_time()
    model = cls(n_estimators=n_trees, random_state=0).fit(X, y)
    fitted = time.process_time()
    accuracy = float(np.mean(model.predict(X_test) == y_test))
    return fitted - start, time.process_time() - fitted, accuracy


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    from sklearn.datasets import make_classification
    from sklearn.ensemble import ExtraTreesClassifier

    def sklearn(**kw):
        return ExtraTreesClassifier(n_jobs=1, **kw)

    n_train, sizes = (2_000, [5]) if quick else (20_000, [10, 50])
    X, y = make_classification(n_samples=n_train + 10_000, n_features=20, n_informative=10,
                               random_state=0)
    X_train, y_train, X_test, y_test = X[:n_train], y[:n_train], X[n_train:], y[n_train:]
    impl.ExtraTreesClassifier(n_estimators=2, random_state=0).fit(X[:500], y[:500])  # warm up

    table = Table("rows x features", "trees", "impl fit s", "impl predict s", "sklearn fit s",
                  "sklearn predict s", "ratio (goal <= 2)", "impl acc", "sklearn acc")
    results = []
    for n_trees in sizes:
        ours = _run(impl.ExtraTreesClassifier, n_trees, X_train, y_train, X_test, y_test)
        theirs = _run(sklearn, n_trees, X_train, y_train, X_test, y_test)
        ratio = (ours[0] + ours[1]) / (theirs[0] + theirs[1])
        results.append((n_trees, ours, theirs))
        table.add(f"{n_train:,} x 20", n_trees, f"{ours[0]:.2f}", f"{ours[1]:.2f}",
                  f"{theirs[0]:.2f}", f"{theirs[1]:.2f}", f"{ratio:.2f}x", f"{ours[2]:.3f}",
                  f"{theirs[2]:.3f}")
    if out is not None:
        _plot(results, Path(out))
    return table


def _plot(results, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    x = np.arange(len(results))

    def draw(say):
        fig, ax = pyplot().subplots(figsize=(7, 3.8))
        for offset, side, name in [(-0.2, 1, say("this kata", "本題解答")),
                                   (0.2, 2, "scikit-learn (n_jobs=1)")]:
            fit = [r[side][0] for r in results]
            predict = [r[side][1] for r in results]
            ax.bar(x + offset, fit, 0.4, label=f"{name}: fit")
            ax.bar(x + offset, predict, 0.4, bottom=fit, label=f"{name}: predict", alpha=0.6)
        ax.set_xticks(x, [say(f"{n} trees", f"{n} 棵樹") for n, _, _ in results])
        ax.set_ylabel(say("CPU time (s)", "CPU 時間（秒）"))
        ax.set_ylim(bottom=0)
        ax.set_title(say("Extra-Trees on 20,000 rows x 20 features: fit + predict",
                         "Extra-Trees，20,000 列 x 20 個特徵：fit + predict"))
        ax.legend(loc="upper left")
        fig.tight_layout()
        return fig

    save_plots(out / "extra_trees_debug.png", draw)
