"""SlotCache and SequenceCache: KV-cached greedy decoding, batched across sequences."""

from collections.abc import Hashable
from typing import TYPE_CHECKING

from harness.fakes import check_slot

if TYPE_CHECKING:
    from harness.toylm.model import ToyLM


class _Cache:
    """Token lists keyed by KV-pool row.

    The pool lags each list by its last token, which the next decode feeds to get the next
    token's logits: so prefill needs no logits and a prompt may arrive in any chunks.
    """

    def __init__(self, model: "ToyLM", rows: int):
        self.model = model
        self.pool = model.new_pool(rows)
        self.tokens: dict[int, list[int]] = {}

    def _unseen(self, row: int) -> list[int]:
        return self.tokens[row][self.pool.lengths[row] :]

    def _prefill(self, rows: list[int]) -> None:
        todo = [r for r in rows if len(self._unseen(r)) > 1]
        self.model.feed(self.pool, todo, [self._unseen(r)[:-1] for r in todo])

    def _decode(self, rows: list[int]) -> list[int]:
        for r in rows:
            self.model.check_length(len(self.tokens[r]) + 1)
        logits = self.model.feed(self.pool, rows, [self._unseen(r) for r in rows])
        out = logits.argmax(-1).tolist()
        for r, t in zip(rows, out, strict=True):
            self.tokens[r].append(t)
        return out


def _check_distinct(ids: list) -> None:
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate ids in one decode call: {ids}")


class SlotCache(_Cache):
    """A fixed number of slots; reset_slot loads a prompt, decode extends listed slots."""

    def __init__(self, model: "ToyLM", num_slots: int):
        if num_slots < 1:
            raise ValueError(f"num_slots must be >= 1, got {num_slots}")
        super().__init__(model, num_slots)
        self.num_slots = num_slots

    def reset_slot(self, slot: int, prompt: list[int]) -> None:
        """Load `prompt` into `slot`, discarding whatever the slot held."""
        check_slot(slot, self.num_slots)
        self.model.check_prompt(prompt)
        self.tokens[slot] = list(prompt)
        self.pool.lengths[slot] = 0
        self._prefill([slot])

    def decode(self, slots: list[int]) -> list[int]:
        """Next token of each listed slot, appended to it; one batched forward pass."""
        _check_distinct(slots)
        for slot in slots:
            check_slot(slot, self.num_slots)
            if slot not in self.tokens:
                raise ValueError(f"slot {slot} was decoded before any reset_slot")
        return self._decode(list(slots))


class SequenceCache(_Cache):
    """Sequences by id, each on its own pool row until freed."""

    def __init__(self, model: "ToyLM"):
        super().__init__(model, rows=8)
        self.rows: dict[Hashable, int] = {}
        self.free_rows = list(range(self.pool.rows))

    def __contains__(self, seq_id: Hashable) -> bool:
        return seq_id in self.rows

    def __len__(self) -> int:
        return len(self.rows)

    def prefill(self, seq_id: Hashable, tokens: list[int]) -> None:
        """Append a chunk of prompt tokens to `seq_id`, starting it if new. Generates nothing."""
        self.prefill_batch({seq_id: tokens})

    def prefill_batch(self, chunks: dict[Hashable, list[int]]) -> None:
        """Several sequences' chunks in one forward pass."""
        for seq_id, chunk in chunks.items():  # validate all before changing anything
            self.model.check_tokens(chunk)
            held = len(self.tokens[self.rows[seq_id]]) if seq_id in self.rows else 0
            self.model.check_length(held + len(chunk))
        rows = [self._row(seq_id) for seq_id in chunks]
        for row, chunk in zip(rows, chunks.values(), strict=True):
            self.tokens[row] += chunk
        self._prefill(rows)

    def decode(self, seq_ids: list[Hashable]) -> list[int]:
        """Next token of each sequence, appended to it; one batched forward pass."""
        _check_distinct(seq_ids)
        rows = [self._known(seq_id) for seq_id in seq_ids]
        for seq_id, row in zip(seq_ids, rows, strict=True):
            if not self.tokens[row]:
                raise ValueError(f"sequence {seq_id!r} has no tokens to decode from")
        return self._decode(rows)

    def free(self, seq_id: Hashable) -> None:
        row = self._known(seq_id)
        del self.rows[seq_id], self.tokens[row]
        self.pool.lengths[row] = 0
        self.free_rows.append(row)

    def _known(self, seq_id: Hashable) -> int:
        if seq_id not in self.rows:
            raise ValueError(f"unknown sequence id {seq_id!r}")
        return self.rows[seq_id]

    def _row(self, seq_id: Hashable) -> int:
        if seq_id not in self.rows:
            if not self.free_rows:
                old = self.pool.rows
                self.pool.reserve(rows=old + 1)
                self.free_rows = list(range(old, self.pool.rows))
            self.rows[seq_id] = self.free_rows.pop()
            self.tokens[self.rows[seq_id]] = []
        return self.rows[seq_id]
