"""ToyLM: a seeded toy transformer for testing inference code (see README.md)."""

from harness.toylm.caches import SequenceCache, SlotCache
from harness.toylm.model import ToyLM

__all__ = ["SequenceCache", "SlotCache", "ToyLM"]
