"""What the prompt leaves open stays open: a correct solution that takes the strict side of an
open point still passes every hidden test.

Level 1 leaves non-floating logits open and Level 2 non-floating q, k, v (Level 3 keeps both), so
the reference made to reject integer and bool arrays there must pass the whole suite: no test may
pass only for integer inputs.
"""

from __future__ import annotations

import forkserver

from harness import catalog, mutants

KATA = catalog.get("padded_attention")

# The reference's two conversions to float64, made strict.
STRICT = [
    ("    return [np.asarray(a, dtype=np.float64) for a in arrays]",
     "    arrays = [np.asarray(a) for a in arrays]\n"
     "    if any(not np.issubdtype(a.dtype, np.floating) for a in arrays):\n"
     "        raise ValueError('q, k and v must be floating arrays')\n"
     "    return [a.astype(np.float64) for a in arrays]"),
    ("    x = np.asarray(logits, dtype=np.float64)\n",
     "    x = np.asarray(logits)\n"
     "    if not np.issubdtype(x.dtype, np.floating):\n"
     "        raise ValueError('logits must be a floating array')\n"
     "    x = x.astype(np.float64)\n"),
]


def test_a_solution_rejecting_non_floating_inputs_passes_every_hidden_test(tmp_path):
    source = mutants.reference(KATA)
    for old, new in STRICT:
        assert source.count(old) == 1, f"the reference no longer has {old.strip()!r}"
        source = source.replace(old, new)
    strict = tmp_path / f"{KATA.module}.py"
    strict.write_text(source, encoding="utf-8")
    run, output = forkserver.grade(KATA, str(strict), hidden_only=True)
    assert run.passed, output[-3000:]
