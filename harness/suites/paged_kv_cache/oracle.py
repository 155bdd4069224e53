"""A plain second model of the spec: lists, whole-prefix tuples, brute force. Slow and obvious,
so the state machine can compare every table, count and hit against it."""

from __future__ import annotations

from collections import Counter


class Oracle:
    def __init__(self, num_blocks: int, block_size: int, caching: bool):
        self.bs, self.caching = block_size, caching
        self.queue = list(range(num_blocks))
        self.tables: dict = {}
        self.tokens: dict = {}
        self.salts: dict = {}
        self.entries: dict = {}  # (salt, whole prefix tuple) -> block

    def refs(self) -> Counter:
        return Counter(b for table in self.tables.values() for b in table)

    def reused(self, tokens: list[int], salt) -> list[int]:
        blocks = []
        for i in range((len(tokens) - 1) // self.bs):
            block = self.entries.get((salt, tuple(tokens[: (i + 1) * self.bs])))
            if block is None:
                break
            blocks.append(block)
        return blocks

    def needed(self, tokens: list[int], salt) -> int:
        reused = self.reused(tokens, salt)
        refs = self.refs()
        return -(-len(tokens) // self.bs) - len(reused) + sum(refs[b] == 0 for b in reused)

    def fits(self, tokens: list[int], salt) -> bool:
        return self.needed(tokens, salt) <= len(self.queue)

    def take(self) -> int:
        block = self.queue.pop(0)
        self.entries = {k: b for k, b in self.entries.items() if b != block}
        return block

    def register(self, salt, prefix: list[int], block: int) -> None:
        if self.caching:
            self.entries.setdefault((salt, tuple(prefix)), block)

    def allocate(self, seq, tokens: list[int], salt) -> int:
        reused = self.reused(tokens, salt)
        for b in reused:
            if b in self.queue:
                self.queue.remove(b)
        table = reused + [self.take() for _ in range(-(-len(tokens) // self.bs) - len(reused))]
        for i in range(len(reused), len(tokens) // self.bs):
            self.register(salt, tokens[: (i + 1) * self.bs], table[i])
        self.tables[seq], self.tokens[seq], self.salts[seq] = table, list(tokens), salt
        return len(reused) * self.bs

    def needs_block(self, seq) -> bool:
        return len(self.tokens[seq]) % self.bs == 0 or self.refs()[self.tables[seq][-1]] > 1

    def append(self, seq, token: int):
        table, copy = self.tables[seq], None
        if len(self.tokens[seq]) % self.bs == 0:
            table.append(self.take())
        elif self.refs()[table[-1]] > 1:
            src = table[-1]
            table[-1] = self.take()
            copy = (src, table[-1])
        self.tokens[seq].append(token)
        if len(self.tokens[seq]) % self.bs == 0:
            self.register(self.salts[seq], self.tokens[seq], table[-1])
        return copy

    def fork(self, parent, child) -> None:
        self.tables[child] = list(self.tables[parent])
        self.tokens[child] = list(self.tokens[parent])
        self.salts[child] = self.salts[parent]

    def free(self, seq) -> None:
        table = self.tables.pop(seq)
        del self.tokens[seq], self.salts[seq]
        refs = self.refs()
        for b in reversed(table):
            if refs[b] == 0:
                self.queue.append(b)
