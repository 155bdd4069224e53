"""Hidden suite of the kv_cache_debug kata. The kata is PyTorch code: without torch, every module
of the suite is skipped, with the reason, and the other katas grade as usual."""

import pytest

REASON = "the kv_cache_debug kata needs torch: pip install -e '.[torch]'"
pytest.importorskip("torch", reason=REASON)
