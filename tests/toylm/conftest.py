import pytest

REASON = "ToyLM needs torch (pip install -e '.[torch]')"


@pytest.fixture(scope="package", autouse=True)
def _one_thread(one_torch_thread):
    yield


@pytest.fixture(scope="session")
def model():
    pytest.importorskip("torch", reason=REASON)
    from harness.toylm import ToyLM

    return ToyLM(device="cpu")
