import pytest

REASON = "ToyLM needs torch (pip install -e '.[torch]')"


@pytest.fixture(scope="package", autouse=True)
def one_thread():
    """ToyLM's ops are tiny: extra threads gain nothing and, on a busy machine, their spinning
    slows every op down many times over."""
    torch = pytest.importorskip("torch", reason=REASON)
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def model():
    pytest.importorskip("torch", reason=REASON)
    from harness.toylm import ToyLM

    return ToyLM(device="cpu")
