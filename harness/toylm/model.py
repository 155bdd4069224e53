"""ToyLM: a small seeded decoder-only transformer with greedy decoding."""

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from harness.stopping import generate_with
from harness.toylm.caches import SequenceCache, SlotCache
from harness.toylm.kv import KVPool
from harness.toylm.weights import make_weights


def rms_norm(x: torch.Tensor) -> torch.Tensor:
    return F.rms_norm(x, x.shape[-1:], eps=1e-6)


class ToyLM:
    def __init__(self, seed: int = 0, vocab_size: int = 128, d_model: int = 64, n_layers: int = 2,
                 n_heads: int = 4, max_context: int = 1024, dtype: torch.dtype = torch.float64,
                 device: str | torch.device = "auto"):
        if d_model % n_heads:
            raise ValueError(f"d_model={d_model} is not divisible by n_heads={n_heads}")
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.vocab_size, self.d_model, self.n_layers = vocab_size, d_model, n_layers
        self.n_heads, self.max_context, self.dtype = n_heads, max_context, dtype
        self.device = torch.device(device)
        weights = make_weights(seed, vocab_size, d_model, n_layers, max_context)
        self.weights = weights.to(dtype, self.device)

    # --- the stateless path -------------------------------------------------------------

    def model_next(self, prefixes: list[list[int]]) -> list[int]:
        """Greedy next token of each full prefix, in one forward pass."""
        return self.logits(prefixes).argmax(-1).tolist()

    def logits(self, prefixes: list[list[int]]) -> torch.Tensor:
        """Next-token logits [len(prefixes), vocab] of each full prefix, in one forward pass."""
        for prefix in prefixes:
            self.check_prompt(prefix)
            self.check_length(len(prefix) + 1)
        pool = self.new_pool(rows=max(1, len(prefixes)))
        return self.feed(pool, list(range(len(prefixes))), prefixes)

    def generate(self, prompt: list[int], max_tokens: int, stop_token: int | None = None,
                 stop_sequence: list[int] | None = None) -> list[int]:
        """Solo greedy reference (see harness.stopping.generate_with for the stop rules); unlike
        the fakes' it rejects a bad prompt even when it generates nothing."""
        self.check_prompt(prompt)
        return generate_with(self.model_next, prompt, max_tokens, stop_token, stop_sequence)

    # --- the cached paths ---------------------------------------------------------------

    def slot_cache(self, num_slots: int) -> SlotCache:
        return SlotCache(self, num_slots)

    def sequence_cache(self) -> SequenceCache:
        return SequenceCache(self)

    def new_pool(self, rows: int) -> KVPool:
        head_dim = self.d_model // self.n_heads
        return KVPool(self.n_layers, self.n_heads, head_dim, self.dtype, self.device, rows)

    @torch.inference_mode()
    def feed(self, pool: KVPool, rows: list[int], chunks: Sequence[Sequence[int]]) -> torch.Tensor:
        """Run each (distinct) row's next non-empty chunk, caching its keys and values in `pool`.

        Returns the logits after each chunk's last token. Chunks are right-padded to one
        width; the pads' keys land past their row's end, where later tokens overwrite them.
        """
        if not rows:
            return torch.empty(0, self.vocab_size, dtype=self.dtype, device=self.device)
        w, dev = self.weights, self.device
        batch, width = len(rows), max(len(c) for c in chunks)
        heads, head_dim = self.n_heads, self.d_model // self.n_heads
        starts = [pool.lengths[r] for r in rows]
        span = max(starts) + width  # key positions any query here can see
        pool.reserve(capacity=span)

        padded = [[*c, *[0] * (width - len(c))] for c in chunks]
        tokens = torch.tensor(padded, device=dev)
        pos = torch.tensor(starts, device=dev)[:, None] + torch.arange(width, device=dev)
        idx = torch.tensor(rows, device=dev)
        # Causal over absolute positions. A pad query always sees itself, so no softmax row is
        # all -inf: that NaN would reach real rows through the next layer's keys and values.
        hidden = torch.arange(span, device=dev) > pos[:, None, :, None]  # [B, 1, W, span]

        x = w.tok_emb[tokens] + w.pos_emb[pos.clamp(max=self.max_context - 1)]
        for i, layer in enumerate(w.layers):
            q, k, v = (rms_norm(x) @ layer.wqkv).view(batch, width, 3, heads, head_dim).unbind(2)
            pool.write(i, idx, pos, k, v)
            k_all, v_all = pool.read(i, rows, idx, span)  # [B, H, span, hd]
            scores = (q.transpose(1, 2) * head_dim**-0.5) @ k_all.transpose(2, 3)
            attn = scores.masked_fill(hidden, float("-inf")).softmax(-1) @ v_all
            x = x + attn.transpose(1, 2).reshape(batch, width, self.d_model) @ layer.wo
            x = x + F.silu(rms_norm(x) @ layer.w_up) @ layer.w_down

        for r, c in zip(rows, chunks, strict=True):
            pool.lengths[r] += len(c)
        last = torch.tensor([len(c) - 1 for c in chunks], device=dev)
        return rms_norm(x[torch.arange(batch, device=dev), last]) @ w.head

    # --- validation ---------------------------------------------------------------------

    def check_prompt(self, tokens: Sequence[int]) -> None:
        if len(tokens) == 0:
            raise ValueError("empty prompt: need at least one token")
        self.check_tokens(tokens)
        self.check_length(len(tokens))

    def check_tokens(self, tokens: Sequence[int]) -> None:
        for t in tokens:
            if not 0 <= t < self.vocab_size:
                raise ValueError(f"token {t} is outside the vocabulary [0, {self.vocab_size})")

    def check_length(self, length: int) -> None:
        if length > self.max_context:
            raise ValueError(f"context overflow: {length} tokens exceed "
                             f"max_context={self.max_context}")
