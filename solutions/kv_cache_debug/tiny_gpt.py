"""A tiny GPT with a KV cache, padding masks and batched greedy decoding, in PyTorch (float64).

Pre-norm blocks of rotary multi-head attention and a GELU MLP, a final LayerNorm and an untied
head. `forward` runs a (batch, time) chunk of ids against a mask over every step so far (cached
steps first, then the new ones; 1 real, 0 pad) and the cache of the earlier steps; it returns the
logits and the grown cache. `generate` pads a batch of prompts and decodes it on the cache.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence

import torch
import torch.nn.functional as F

# Per layer (k, v), each (batch, n_heads, time, head_dim).
Cache = Sequence[tuple[torch.Tensor, torch.Tensor]]

EPS = 1e-5  # LayerNorm
BASE = 10000.0  # rotary
LAYER_KEY = re.compile(r"layers\.(0|[1-9][0-9]*)\.(.+)")


def layer_shapes(d: int, f: int) -> dict[str, tuple[int, ...]]:
    return {"ln1.w": (d,), "ln1.b": (d,), "wq": (d, d), "wk": (d, d), "wv": (d, d),
            "wo": (d, d), "ln2.w": (d,), "ln2.b": (d,), "w1": (d, f), "b1": (f,),
            "w2": (f, d), "b2": (d,)}


def is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def layer_norm(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, correction=0)  # biased, as torch.nn.LayerNorm
    return (x - mean) / torch.sqrt(var + EPS) * w + b


def rotate(x: torch.Tensor, pos: torch.Tensor) -> torch.Tensor:
    """Rotary embedding of x (B, H, T, hd) at positions pos (B, T), rotate-half layout: the pair
    (i, i + hd/2) turns by pos * BASE**(-2i/hd)."""
    half = x.shape[-1] // 2
    i = torch.arange(half, dtype=x.dtype, device=x.device)
    angle = pos[:, None, :, None] * torch.exp(-math.log(BASE) * 2 * i / x.shape[-1])
    cos, sin = angle.cos(), angle.sin()
    x1, x2 = x[..., :half], x[..., half:]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


def split_heads(x: torch.Tensor, n_heads: int) -> torch.Tensor:
    """(B, T, D) -> (B, H, T, hd): head j takes columns [j*hd, (j+1)*hd)."""
    B, T, D = x.shape
    return x.view(B, T, n_heads, D // n_heads).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, hd) -> (B, T, H*hd): the heads' columns side by side, in order."""
    B, H, T, hd = x.shape
    return x.transpose(1, 2).reshape(B, T, H * hd)


def allowed(mask: torch.Tensor, T: int) -> torch.Tensor:
    """(B, 1, T, S): may new query i attend key j? Only real keys, none after its own step."""
    S = mask.shape[1]
    ok = mask[:, None, None, :]
    if T > 1:  # one new token sees every step: nothing to cut
        ok = ok & torch.ones(T, S, dtype=torch.bool, device=mask.device).tril(S - T)
    return ok


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, ok: torch.Tensor) -> torch.Tensor:
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    # finfo.min, not -inf: a pad query with no real key to see (a left pad) gets a uniform, finite
    # row. With -inf it is NaN, and the next layer's 0 * NaN spreads that to every real row.
    scores = scores.masked_fill(~ok, torch.finfo(scores.dtype).min)
    return scores.softmax(-1) @ v


def last_real(mask: torch.Tensor) -> torch.Tensor:
    """(B,): each row's last real column."""
    steps = torch.arange(mask.shape[1], device=mask.device)
    return (mask * steps).argmax(-1)


class TinyGPT:
    def __init__(self, weights: Mapping[str, torch.Tensor], n_heads: int):
        if not is_int(n_heads) or n_heads < 1:
            raise ValueError(f"n_heads must be an int >= 1, got {n_heads!r}")
        embed, w1 = weights.get("embed"), weights.get("layers.0.w1")
        if not isinstance(embed, torch.Tensor) or embed.dim() != 2:
            raise ValueError("weights need 'embed', a (V, D) tensor")
        if not isinstance(w1, torch.Tensor) or w1.dim() != 2:
            raise ValueError("weights need 'layers.0.w1', a (D, F) tensor")
        (V, D), ffn = embed.shape, w1.shape[1]
        if D % n_heads or D // n_heads % 2:
            raise ValueError(f"n_heads={n_heads} must split D={D} into an even head dim")
        names = layer_shapes(D, ffn)
        found = [LAYER_KEY.fullmatch(key) for key in weights if isinstance(key, str)]
        L = 1 + max((int(m[1]) for m in found if m and m[2] in names), default=0)
        shapes = {"embed": (V, D), "ln_f.w": (D,), "ln_f.b": (D,), "head": (D, V)}
        shapes |= {f"layers.{i}.{name}": s for i in range(L) for name, s in names.items()}
        for key, shape in shapes.items():
            w = weights.get(key)
            if not isinstance(w, torch.Tensor) or tuple(w.shape) != shape:
                got = tuple(w.shape) if isinstance(w, torch.Tensor) else type(w).__name__
                raise ValueError(f"weight {key!r} must be a tensor of shape {shape}, got {got}")
        self.device, self.n_heads, self.vocab = embed.device, n_heads, V
        w = {key: weights[key].to(self.device, torch.float64) for key in shapes}
        self.embed, self.head, self.ln_f = w["embed"], w["head"], (w["ln_f.w"], w["ln_f.b"])
        self.layers = [{name: w[f"layers.{i}.{name}"] for name in names} for i in range(L)]

    def check_ids(self, ids: object) -> tuple[int, int]:
        if not isinstance(ids, torch.Tensor) or ids.dim() != 2 or ids.dtype == torch.bool \
                or ids.is_floating_point() or ids.is_complex():
            raise ValueError("ids must be a 2-D integer tensor (batch, time)")
        if ids.numel() == 0:
            raise ValueError(f"ids must hold at least one row and one step, got {tuple(ids.shape)}")
        if ids.min() < 0 or ids.max() >= self.vocab:
            raise ValueError(f"ids must lie in [0, {self.vocab})")
        return ids.shape

    def check_cache(self, cache: object, B: int) -> int:
        """The number of cached steps: every k and v is (B, H, S_past, hd), with one S_past."""
        if cache is None:
            return 0
        L, H, hd = len(self.layers), self.n_heads, self.embed.shape[1] // self.n_heads
        pairs = cache if isinstance(cache, Sequence) else []
        tensors = [t for p in pairs if isinstance(p, Sequence) and len(p) == 2 for t in p]
        shapes = {tuple(t.shape) if isinstance(t, torch.Tensor) else () for t in tensors}
        shape = shapes.pop() if len(shapes) == 1 else ()
        if len(pairs) != L or len(tensors) != 2 * L or len(shape) != 4 \
                or shape[:2] != (B, H) or shape[3] != hd:
            raise ValueError(f"cache must be {L} pairs (k, v), each ({B}, {H}, S_past, {hd})")
        return shape[2]

    def check_mask(self, mask: object, B: int, S: int) -> torch.Tensor:
        if mask is None:
            return torch.ones(B, S, dtype=torch.bool, device=self.device)
        if not isinstance(mask, torch.Tensor) or tuple(mask.shape) != (B, S):
            raise ValueError(f"attention_mask must be a tensor of shape ({B}, {S})")
        if mask.is_floating_point() or mask.is_complex():
            raise ValueError("attention_mask must be bool or integer, not float")
        if ((mask != 0) & (mask != 1)).any():
            raise ValueError("attention_mask must hold only 0 and 1")
        return mask.to(self.device).bool()

    def forward(self, ids: torch.Tensor, attention_mask: torch.Tensor | None = None,
                cache: Cache | None = None) -> tuple[torch.Tensor, Cache]:
        B, T = self.check_ids(ids)
        S_past = self.check_cache(cache, B)
        mask = self.check_mask(attention_mask, B, S_past + T)
        # Rotary positions count real tokens only, so padding shifts nothing.
        pos = (mask.cumsum(-1) - 1).clamp(min=0)[:, S_past:]
        ok = allowed(mask, T)
        h = self.embed[ids.to(self.device)]
        new_cache = [None] * len(self.layers)  # a new list: the caller's cache stays as it was
        for i, layer in enumerate(self.layers):
            a = layer_norm(h, layer["ln1.w"], layer["ln1.b"])
            q, k, v = (split_heads(a @ layer[name], self.n_heads) for name in ("wq", "wk", "wv"))
            q, k = rotate(q, pos), rotate(k, pos)
            if cache is not None:
                k = torch.cat([cache[i][0], k], dim=2)
                v = torch.cat([cache[i][1], v], dim=2)
            new_cache[i] = (k, v)
            h = h + merge_heads(attend(q, k, v, ok)) @ layer["wo"]
            a = layer_norm(h, layer["ln2.w"], layer["ln2.b"])
            h = h + F.gelu(a @ layer["w1"] + layer["b1"]) @ layer["w2"] + layer["b2"]
        return layer_norm(h, *self.ln_f) @ self.head, new_cache

    def generate(self, prompts: list[list[int]], max_new_tokens: int, eos_id: int | None = None,
                 *, padding_side: str = "left") -> list[list[int]]:
        V = self.vocab
        if not isinstance(prompts, list) or not prompts or not all(
                isinstance(p, list) and p and all(is_int(t) and 0 <= t < V for t in p)
                for p in prompts):
            raise ValueError(f"prompts must be a non-empty list of non-empty lists of ids in "
                             f"[0, {V})")
        if not is_int(max_new_tokens) or max_new_tokens < 0:
            raise ValueError(f"max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
        if eos_id is not None and not (is_int(eos_id) and 0 <= eos_id < V):
            raise ValueError(f"eos_id must be None or an id in [0, {V}), got {eos_id!r}")
        if padding_side not in ("left", "right"):
            raise ValueError(f'padding_side must be "left" or "right", got {padding_side!r}')
        out = [[] for _ in prompts]
        if max_new_tokens == 0:
            return out
        width = max(len(p) for p in prompts)

        def pad(row: list[int]) -> list[int]:  # a new list, as wide as the longest prompt
            gap = [0] * (width - len(row))
            return gap + row if padding_side == "left" else row + gap

        mask = torch.tensor([pad([1] * len(p)) for p in prompts], device=self.device).bool()
        ids = torch.tensor([pad(p) for p in prompts], device=self.device)
        logits, cache = self.forward(ids, mask)
        rows = torch.arange(len(prompts), device=self.device)
        tokens = logits[rows, last_real(mask)].argmax(-1)
        live = torch.ones(len(prompts), dtype=torch.bool, device=self.device)
        for step in range(max_new_tokens):
            for row, (token, going) in enumerate(zip(tokens.tolist(), live.tolist(), strict=True)):
                if going:
                    out[row].append(token)
            if eos_id is not None:
                live &= tokens != eos_id
            if step == max_new_tokens - 1 or not live.any():
                break
            mask = torch.cat([mask, live[:, None]], dim=1)
            logits, cache = self.forward(tokens[:, None], mask, cache)
            tokens = logits[:, -1].argmax(-1)
        return out
