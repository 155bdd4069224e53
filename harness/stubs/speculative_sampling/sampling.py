"""Kata speculative_sampling: per-row top-k/top-p/min-p sampling no batch can change, then
speculative verification. Read the prompt with `kata show speculative_sampling`, then grade with
`pytest katas/speculative_sampling`. NumPy only; bad input raises ValueError; randomness only
from rng.random() or rng.random(n)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class SamplingParams:
    temperature: float = 1.0
    top_k: int | None = 0  # 0 or None: off
    top_p: float = 1.0  # 1.0: off
    min_p: float = 0.0  # 0.0: off


# --- Level 1 ------------------------------------------------------------------------------------


def probs(logits: np.ndarray, temperature=1.0, top_k=0, top_p=1.0, min_p=0.0) -> np.ndarray:
    """(V,) float64 for 1-D logits. Temperature 0: one-hot on the lowest id among the largest
    logits. Otherwise, in order: softmax((logits - max) / temperature), top-k (ties of the k-th
    stay), top-p (keep i if the tokens strictly more probable than i sum to < top_p), min-p (keep
    p_i >= min_p * max(p)); each filter zeroes what it drops and renormalises."""
    raise NotImplementedError


def sample(logits: np.ndarray, params: SamplingParams, rng) -> int:
    """p = probs(logits, <params' fields>). Temperature 0: the greedy token, no draw. Otherwise
    one u = rng.random() and, with c = cumsum(p), the smallest i with u * c[V - 1] < c[i]."""
    raise NotImplementedError


# --- Level 2 ------------------------------------------------------------------------------------


def batch_probs(logits: np.ndarray, temperature, top_k, top_p, min_p) -> np.ndarray:
    """(B, V): row i bitwise equal to probs(logits[i], temperature[i], top_k[i], top_p[i],
    min_p[i]). Each parameter a list, tuple or 1-D array of length B, never broadcast."""
    raise NotImplementedError


def batch_sample(logits: np.ndarray, temperature, top_k, top_p, min_p, rngs) -> np.ndarray:
    """(B,) integers: row i draws only from rngs[i] and gives what sample(logits[i],
    SamplingParams(temperature[i], top_k[i], top_p[i], min_p[i]), rngs[i]) would."""
    raise NotImplementedError


# --- Level 3 ------------------------------------------------------------------------------------


def acceptance_rate(target: np.ndarray, draft: np.ndarray) -> float:
    """alpha = sum_i min(target_i, draft_i) for two 1-D distributions of one length."""
    raise NotImplementedError


def expected_tokens(alpha: float, k: int) -> float:
    """sum_{j=0..k} alpha^j: the tokens one verify call yields on average; k + 1 at alpha = 1."""
    raise NotImplementedError


def verify(draft_tokens, draft_probs: np.ndarray | None, target_probs: np.ndarray,
           rng) -> list[int]:
    """Draw k + 1 uniforms first. Accept draft x_i while u_i < p_i(x_i) / q_i(x_i); at the first
    rejection return the accepted drafts and a token drawn from max(0, p_i - q_i) (p_i if that
    is all 0) with u_{k+1}; if all k pass, the drafts and a bonus token from p_{k+1}.
    draft_probs None means one-hot drafts (an n-gram drafter)."""
    raise NotImplementedError
