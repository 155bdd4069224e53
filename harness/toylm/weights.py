"""Seeded weights: the same seed gives the same numbers on every machine and device."""

from dataclasses import dataclass, fields

import torch


@dataclass
class Layer:
    wqkv: torch.Tensor  # [d, 3d]: query, key and value projections side by side
    wo: torch.Tensor  # [d, d]
    w_up: torch.Tensor  # [d, 4d]
    w_down: torch.Tensor  # [4d, d]


@dataclass
class Weights:
    tok_emb: torch.Tensor  # [vocab, d]
    pos_emb: torch.Tensor  # [max_context, d]
    layers: list[Layer]
    head: torch.Tensor  # [d, vocab]

    def to(self, dtype: torch.dtype, device: torch.device) -> "Weights":
        def move(t: torch.Tensor) -> torch.Tensor:
            return t.to(device=device, dtype=dtype)

        layers = [Layer(*(move(getattr(x, f.name)) for f in fields(Layer))) for x in self.layers]
        return Weights(move(self.tok_emb), move(self.pos_emb), layers, move(self.head))


def make_weights(seed: int, vocab_size: int, d_model: int, n_layers: int,
                 max_context: int) -> Weights:
    """float64 weights on the CPU; callers cast and move them. Uniform draws (no Box-Muller, so
    no libm) keep the bits identical across machines."""
    gen = torch.Generator().manual_seed(seed)

    def draw(*shape: int, std: float) -> torch.Tensor:
        u = torch.rand(*shape, generator=gen, dtype=torch.float64)
        return (2 * u - 1) * (3**0.5 * std)  # uniform with standard deviation `std`

    d = d_model
    tok_emb = draw(vocab_size, d, std=1.0)
    # Positions as strong as tokens: at 0.1-0.3x, some greedy continuations from random
    # init collapse into one repeated token.
    pos_emb = draw(max_context, d, std=1.0)
    layers = [Layer(wqkv=draw(d, 3 * d, std=d**-0.5), wo=draw(d, d, std=d**-0.5),
                    w_up=draw(d, 4 * d, std=d**-0.5), w_down=draw(4 * d, d, std=(4 * d) ** -0.5))
              for _ in range(n_layers)]
    head = draw(d, vocab_size, std=d**-0.5)
    return Weights(tok_emb, pos_emb, layers, head)
