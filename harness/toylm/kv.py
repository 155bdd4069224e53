"""KVPool: keys and values of many sequences, one row each, grown on demand."""

import torch


class KVPool:
    """Per layer, keys and values shaped [rows, heads, capacity, head_dim].

    Row r holds positions [0, lengths[r]); anything stored past that is scratch.
    """

    def __init__(self, n_layers: int, n_heads: int, head_dim: int, dtype: torch.dtype,
                 device: torch.device, rows: int, capacity: int = 64):
        def empty() -> torch.Tensor:
            return torch.zeros(rows, n_heads, capacity, head_dim, dtype=dtype, device=device)

        self.keys = [empty() for _ in range(n_layers)]
        self.values = [empty() for _ in range(n_layers)]
        self.lengths = [0] * rows

    @property
    def rows(self) -> int:
        return len(self.lengths)

    @property
    def capacity(self) -> int:
        return self.keys[0].shape[2]

    def reserve(self, rows: int = 0, capacity: int = 0) -> None:
        """Grow to at least `rows` rows and `capacity` positions, doubling to amortise copies."""
        new_rows, new_capacity = self.rows, self.capacity
        while new_rows < rows:
            new_rows *= 2
        while new_capacity < capacity:
            new_capacity *= 2
        if (new_rows, new_capacity) == (self.rows, self.capacity):
            return
        for cache in (self.keys, self.values):
            for i, old in enumerate(cache):
                rows_, heads, capacity_, head_dim = old.shape
                new = old.new_zeros(new_rows, heads, new_capacity, head_dim)
                new[:rows_, :, :capacity_] = old
                cache[i] = new
        self.lengths += [0] * (new_rows - self.rows)

    def write(self, layer: int, idx: torch.Tensor, pos: torch.Tensor, k: torch.Tensor,
              v: torch.Tensor) -> None:
        """Store k and v [B, W, H, hd] at positions pos [B, W] of rows idx [B]."""
        # Index through a [rows, capacity, H, hd] view: much faster than split advanced indices.
        self.keys[layer].transpose(1, 2)[idx[:, None], pos] = k
        self.values[layer].transpose(1, 2)[idx[:, None], pos] = v

    def read(self, layer: int, rows: list[int], idx: torch.Tensor,
             span: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys and values [B, H, span, hd] of rows (idx holds the same rows as a tensor)."""
        k, v = self.keys[layer][:, :, :span], self.values[layer][:, :, :span]
        first = rows[0]
        if rows == list(range(first, first + len(rows))):  # e.g. every slot: a view, no copy
            return k[first : first + len(rows)], v[first : first + len(rows)]
        return k.index_select(0, idx), v.index_select(0, idx)
