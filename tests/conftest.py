import pytest


@pytest.fixture(autouse=True)
def kata_home(tmp_path, monkeypatch):
    """Every test gets its own progress store, never the learner's .kata/."""
    home = tmp_path / "kata-home"
    monkeypatch.setenv("KATA_HOME", str(home))
    return home
