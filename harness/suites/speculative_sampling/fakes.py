"""Generators for the tests: scripted uniforms for goldens and exactness, recorded seeded ones for
statistics. Both record every call, so a test can count what was drawn."""

from __future__ import annotations

import math

import numpy as np


class Scripted:
    """`random()` and `random(n)` hand out the scripted uniforms in order; drawing past the
    script fails the test (an AssertionError, never a ValueError an error test could take)."""

    def __init__(self, *uniforms: float):
        self.uniforms = [float(u) for u in uniforms]
        self.sizes: list[int | None] = []  # one entry per call: None for random()

    @property
    def drawn(self) -> int:
        return sum(1 if n is None else n for n in self.sizes)

    def random(self, size=None):
        n = None if size is None else math.prod(np.atleast_1d(size).tolist())
        start = self.drawn
        if start + (1 if n is None else n) > len(self.uniforms):
            raise AssertionError(f"drew past the {len(self.uniforms)} scripted uniforms")
        self.sizes.append(n)
        if n is None:
            return self.uniforms[start]
        return np.array(self.uniforms[start:start + n]).reshape(size)


class Recorded:
    """A seeded NumPy generator that counts the uniforms drawn from it."""

    def __init__(self, seed: int):
        self.generator = np.random.default_rng(seed)
        self.drawn = 0

    def random(self, size=None):
        self.drawn += 1 if size is None else math.prod(np.atleast_1d(size).tolist())
        return self.generator.random(size)
