import pytest
from mockkit import Clock, Grader

from harness import catalog, diagnosis, grading
from harness.loader import load_module
from harness.session import interview


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


@pytest.fixture
def clock(monkeypatch) -> Clock:
    """The mock's clock, moved only by clock.advance(seconds)."""
    c = Clock()
    monkeypatch.setattr(interview, "now", c)
    return c


@pytest.fixture
def grader(monkeypatch) -> Grader:
    """Queue runs with grader.runs.append(...); each submit takes the next one. The diagnosis
    of those made-up runs is grader.ranked (none by default: hints keep the tests' order)."""
    g = Grader()
    monkeypatch.setattr(grading, "grade", g)
    monkeypatch.setattr(diagnosis, "likely", g.rank)
    return g


@pytest.fixture
def work(tmp_path):
    """The learner's file, outside the repository: tests never touch katas/auc_roc/auc.py."""
    path = tmp_path / "auc.py"
    path.write_text("# my answer\n", encoding="utf-8")
    return path
