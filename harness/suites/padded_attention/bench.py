"""`kata bench padded_attention`: what padding costs and what buckets and packing save, one run.

H = 4 heads of D = 32, float64, causal attention throughout, BLAS on one thread: the figures
compare algorithms, and a shared machine's spinning BLAS threads would swamp them.

1. Padded against a loop. One padded `attention` call over a batch against a Python loop of one
   `attention` call per sequence, pads removed (the baseline). B = 64, 256, 1,024 sequences of 1-8
   tokens; then B = 256 as the longest length doubles 8 -> 128 (lengths uniform in [1, longest]),
   with the share of padded slots. Padding wins while the loop's per-call overhead outweighs the
   wasted work; past the crossover the padded batch computes too many pad scores to win.
2. Padding waste. 10,000 seeded log-normal lengths (median 256, sigma 1, clipped to [1, 4096]):
   the share of padded tokens with one bucket, with 2 / 4 / 8 optimal buckets (`bucket_edges`),
   with 8 equal-width buckets (the baseline), and packed (none).
3. Scaling. Padded `attention` against `varlen_attention` on 16 sequences of lengths uniform in
   [1, T], as T doubles (both quadratic: about 4x per doubling); `bucket_edges` on 4,096 lengths
   with 256, 512 and 1,024 distinct values and 8 buckets (O(k n^2): about 4x per doubling).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from harness.bench import Table, best

HEADS, DIM = 4, 32


def batch(rng: np.random.Generator, lengths: np.ndarray) -> tuple[np.ndarray, ...]:
    """Right-padded q, k, v [B, H, T, D] and their mask for these lengths."""
    width = int(lengths.max())
    q, k, v = (rng.standard_normal((len(lengths), HEADS, width, DIM)) for _ in range(3))
    return q, k, v, np.arange(width) < lengths[:, None]


def padded_vs_loop(impl, lengths: np.ndarray, repeat: int) -> tuple[float, float, float]:
    """(padded seconds, loop seconds, padded share of slots)."""
    q, k, v, mask = batch(np.random.default_rng(0), lengths)
    padded = best(lambda: impl.attention(q, k, v, mask, causal=True), repeat)

    def loop() -> None:
        for b, n in enumerate(lengths):
            impl.attention(q[b:b + 1, :, :n], k[b:b + 1, :, :n], v[b:b + 1, :, :n], causal=True)

    return padded, best(loop, repeat), 1 - mask.mean()


def log_normal_lengths(n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(np.rint(rng.lognormal(np.log(256), 1.0, n)), 1, 4096).astype(np.int64)


def waste(impl, lengths: np.ndarray, edges) -> float:
    padding = impl.padded_tokens(lengths, edges)
    return padding / (padding + lengths.sum())


def packed_vs_padded(impl, width: int, repeat: int) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    lengths = rng.integers(1, width + 1, 16)
    lengths[0] = width
    q, k, v, mask = batch(rng, lengths)
    padded = best(lambda: impl.attention(q, k, v, mask, causal=True), repeat)
    packed = [impl.pack(x.transpose(0, 2, 1, 3), mask)[0] for x in (q, k, v)]
    cu = impl.pack(q.transpose(0, 2, 1, 3), mask)[1]
    return padded, best(lambda: impl.varlen_attention(*packed, cu, causal=True), repeat)


def edges_time(impl, distinct: int, repeat: int) -> float:
    rng = np.random.default_rng(2)
    values = rng.choice(np.arange(1, 8 * distinct), distinct, replace=False)
    lengths = np.concatenate([values, rng.choice(values, 4096 - distinct)])
    return best(lambda: impl.bucket_edges(lengths, 8), repeat)


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.2f} ms"


def times(ratio: float) -> str:
    return f"{ratio:.2f}x"


def main(impl, *, quick: bool = False, out: Path | None = None) -> Table:
    from threadpoolctl import threadpool_limits  # with scikit-learn, as in the other benchmarks

    with threadpool_limits(limits=1, user_api="blas"):
        return run(impl, quick)


def run(impl, quick: bool) -> Table:
    table = Table("figure", "setting", "measured", "baseline", "ratio")
    repeat = 2 if quick else 5
    rng = np.random.default_rng(0)

    sizes, longest = ((64, 256), (16, 32)) if quick else ((64, 256, 1024), (16, 32, 64, 128))
    crossing = None
    for size, top in [(size, 8) for size in sizes] + [(256, top) for top in longest]:
        padded, loop, share = padded_vs_loop(impl, rng.integers(1, top + 1, size), repeat)
        table.add("padded attention", f"B = {size}, lengths 1-{top} ({share:.0%} padding)",
                  ms(padded), f"{ms(loop)} (loop of {size} calls)",
                  f"{times(loop / padded)} speed-up")
        if crossing is None and size == 256 and padded > loop:
            crossing = top
    table.notes.append(
        f"Padding stops paying at B = 256 once the longest length reaches {crossing}: from there "
        "the pad scores cost more than the loop's per-call overhead." if crossing else
        "The padded batch was faster at every length measured: the loop's per-call overhead "
        "still outweighs the pad scores.")

    lengths = log_normal_lengths(2000 if quick else 10_000)
    width = -(-int(lengths.max()) // 8)
    base = waste(impl, lengths, [width * i for i in range(1, 9)])
    rows = [("1 bucket", waste(impl, lengths, [int(lengths.max())]))]
    rows += [(f"{k} optimal buckets", waste(impl, lengths, impl.bucket_edges(lengths, k)))
             for k in (2, 4, 8)]
    for setting, share in rows:
        table.add("padding waste", f"{len(lengths):,} log-normal lengths, {setting}",
                  f"{share:.1%}", f"{base:.1%} (8 equal-width buckets)",
                  f"{times(share / base)} the waste")
    table.add("padding waste", "packed with cu_seqlens", "0.0%",
              f"{base:.1%} (8 equal-width buckets)", "none")

    previous = None
    for width in (32, 64, 128) if quick else (64, 128, 256, 512):
        padded, packed = packed_vs_padded(impl, width, repeat)
        grew = [f" ({times(now / before)} the previous)" if previous else ""
                for now, before in zip((packed, padded), previous or (1, 1), strict=True)]
        table.add("varlen attention", f"16 sequences, lengths 1-{width}", ms(packed) + grew[0],
                  f"padded: {ms(padded)}{grew[1]}", f"{times(padded / packed)} speed-up")
        previous = packed, padded
    previous = None
    for distinct in (128, 256) if quick else (256, 512, 1024):
        spent = edges_time(impl, distinct, repeat)
        table.add("bucket_edges", f"4,096 lengths, {distinct:,} distinct, 8 buckets", ms(spent),
                  "", f"{times(spent / previous)} the previous" if previous else "")
        previous = spent
    return table
