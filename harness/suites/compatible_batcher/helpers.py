"""Requests, Hypothesis strategies and checks shared by the three levels."""

from __future__ import annotations

from hypothesis import strategies as st

MODELS, VERSIONS, DTYPES = ["llama", "qwen"], ["v1", "v2"], ["fp16", "bf16"]
TEMPERATURES, TOP_PS = [0.0, 0.7, 1.0], [1.0, 0.9]
STOPS = [(), ("\n",), ("\n", "\n"), ("a", "b"), ("b", "a")]
FIELDS = {"model": MODELS, "version": VERSIONS, "dtype": DTYPES, "temperature": TEMPERATURES,
          "top_p": TOP_PS, "stop": STOPS, "length": list(range(0, 41))}


def request(impl, rid, *, model="llama", version="v1", dtype="fp16", length=10, arrival_ms=0,
            **sampling):
    return impl.Request(request_id=rid, model=model, version=version, dtype=dtype, length=length,
                        arrival_ms=arrival_ms, **sampling)


def ids(batches) -> list[list]:
    return [[r.request_id for r in batch] for batch in batches]


def model_of(r) -> tuple:
    return (r.model, r.version, r.dtype)


@st.composite
def fields(draw) -> dict:
    """One request's fields (no id, no arrival), from small pools so that keys collide."""
    return {name: draw(st.sampled_from(pool)) for name, pool in FIELDS.items()}


boundaries = st.lists(st.integers(1, 40), max_size=3, unique=True).map(sorted).map(tuple)


@st.composite
def request_lists(draw, impl, max_size: int = 24) -> list:
    """Requests with distinct ids and non-decreasing integer arrivals."""
    n = draw(st.integers(0, max_size))
    gaps = draw(st.lists(st.integers(0, 6), min_size=n, max_size=n))
    out, t = [], 0
    for i, gap in enumerate(gaps):
        t += gap
        out.append(request(impl, i, arrival_ms=t, **draw(fields())))
    return out
