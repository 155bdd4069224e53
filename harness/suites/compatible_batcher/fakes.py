"""Engine fakes: one applies the first request's sampling parameters to the whole batch (a
correctness bug waiting for an incompatible batch), the other samples per row."""

from __future__ import annotations


def output(r, sampling: tuple) -> str:
    """What the engine returns for request `r` under `sampling`: it depends on both."""
    return f"{r.request_id}|{r.length}|T={sampling[0]}|p={sampling[1]}|stop={sampling[2]!r}"


def sampling_of(r) -> tuple:
    return (r.temperature, r.top_p, tuple(r.stop))


def one_set_engine(batch) -> dict:
    shared = sampling_of(batch[0])
    return {r.request_id: output(r, shared) for r in batch}


def per_row_engine(batch) -> dict:
    return {r.request_id: output(r, sampling_of(r)) for r in batch}


def solo(r) -> str:
    return output(r, sampling_of(r))


def run_all(engine, batches) -> dict:
    out: dict = {}
    for batch in batches:
        out.update(engine(batch))
    return out
