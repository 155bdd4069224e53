import pytest

from harness import catalog
from harness.loader import load_module


@pytest.fixture(autouse=True)
def kata_home(tmp_path, monkeypatch):
    """Every test gets its own progress store, never the learner's .kata/."""
    home = tmp_path / "kata-home"
    monkeypatch.setenv("KATA_HOME", str(home))
    return home


@pytest.fixture(scope="package")
def one_torch_thread():
    """For ToyLM tests: see harness.toylm.one_thread."""
    pytest.importorskip("torch", reason="the ToyLM needs torch (pip install -e '.[torch]')")
    from harness.toylm import one_thread

    with one_thread():
        yield


@pytest.fixture(scope="module")
def reference(request):
    """The reference solution of the kata whose end-to-end folder (tests/<kata>/) holds the test."""
    kata = catalog.get(request.path.parent.name)
    return load_module(kata.solution_path, f"{kata.name}_reference_e2e")
