"""ToyLM: a seeded toy transformer for testing inference code (see README.md)."""

from harness.toylm.caches import SequenceCache, SlotCache
from harness.toylm.model import ToyLM
from harness.toylm.threads import one_thread

__all__ = ["SequenceCache", "SlotCache", "ToyLM", "one_thread"]
