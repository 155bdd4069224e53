"""The plain forward the prompt defines: one unpadded sequence, in NumPy float64, looping over
layers, heads and positions; greedy decoding by full recompute. No cache, no mask, no batch."""

from __future__ import annotations

import math

import numpy as np

erf = np.vectorize(math.erf)


def layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


def gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def rotate(x: np.ndarray) -> np.ndarray:
    """Rotary embedding of one head's (n, hd) rows, row t at position t."""
    n, hd = x.shape
    half = hd // 2
    angle = np.arange(n)[:, None] * 10000.0 ** (-2 * np.arange(half) / hd)
    lo, hi = x[:, :half], x[:, half:]
    return np.hstack([lo * np.cos(angle) - hi * np.sin(angle),
                      hi * np.cos(angle) + lo * np.sin(angle)])


def num_layers(w: dict[str, np.ndarray]) -> int:
    return 1 + max(int(key.split(".")[1]) for key in w if key.startswith("layers."))


def logits(w: dict[str, np.ndarray], n_heads: int, tokens: list[int]) -> np.ndarray:
    """(n, V): the logits after each token of `tokens`, a sequence on its own."""
    h = w["embed"][tokens]
    n, d = h.shape
    hd = d // n_heads
    for i in range(num_layers(w)):
        p = {key.split(".", 2)[2]: t for key, t in w.items() if key.startswith(f"layers.{i}.")}
        a = layer_norm(h, p["ln1.w"], p["ln1.b"])
        q, k, v = a @ p["wq"], a @ p["wk"], a @ p["wv"]
        heads = np.zeros((n, d))
        for j in range(n_heads):
            cols = slice(j * hd, (j + 1) * hd)
            qj, kj = rotate(q[:, cols]), rotate(k[:, cols])
            for t in range(n):
                scores = kj[: t + 1] @ qj[t] / math.sqrt(hd)
                weights = np.exp(scores - scores.max())
                heads[t, cols] = weights @ v[: t + 1, cols] / weights.sum()
        h = h + heads @ p["wo"]
        h = h + gelu(layer_norm(h, p["ln2.w"], p["ln2.b"]) @ p["w1"] + p["b1"]) @ p["w2"] + p["b2"]
    return layer_norm(h, w["ln_f.w"], w["ln_f.b"]) @ w["head"]
