import pytest

from harness.toylm.threads import one_thread


@pytest.fixture(autouse=True, scope="package")
def _one_torch_thread():
    """The suite's models are tiny: on a busy machine, extra torch threads make every op many
    times slower, not faster."""
    with one_thread():
        yield
