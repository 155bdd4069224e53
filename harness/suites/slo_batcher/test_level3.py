"""Level 3: the p99 post-mortem — windows of arrivals, utilisation, batch sizes, percentiles,
the tail's own causes, and bad traces."""

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.marks import level

from .oracle import frame, same, stats, tails, traces, windows

grade = level(3)

# Planted traces: (request_id, arrival, dispatch, start, end, batch_id, worker).

# Low load: every request waits alone for its timer. Batch 1 runs across the boundary at 100.
LOW_LOAD = frame([
    (0, 0, 38, 38, 50, 0, "g0"),
    (1, 60, 98, 98, 110, 1, "g0"),
    (2, 120, 156, 156, 170, 2, "g0"),
    (3, 130, 156, 156, 170, 2, "g0"),
])

# One worker; batch 1 straggles from 130 to 300, so request 4 lingers behind it. Batch 1's
# requests arrive on both sides of 100.
STRAGGLER = frame([
    (0, 10, 40, 40, 54, 0, "gpu"),
    (1, 20, 40, 40, 54, 0, "gpu"),
    (2, 95, 130, 130, 300, 1, "gpu"),
    (3, 105, 130, 130, 300, 1, "gpu"),
    (4, 150, 300, 300, 312, 2, "gpu"),
])

# High load: full batches of four, each running 36 ms; nobody waits long for company.
BIG_BATCHES = frame([
    *[(i, i, 4, 4, 40, 0, "g0") for i in range(4)],
    *[(4 + i, 50 + i, 54, 54, 90, 1, "g0") for i in range(4)],
])

# Two workers, both busy until 45 and 46: batch 2 is dispatched at 15 and waits for g1.
QUEUEING_ROWS = [
    (0, 0, 5, 5, 45, 0, "g0"),
    (1, 2, 5, 5, 45, 0, "g0"),
    (2, 3, 6, 6, 46, 1, "g1"),
    (3, 4, 6, 6, 46, 1, "g1"),
    (4, 10, 15, 46, 56, 2, "g1"),
    (5, 12, 15, 46, 56, 2, "g1"),
    (6, 60, 62, 62, 72, 3, "g0"),
]
QUEUEING = frame(QUEUEING_ROWS)


@grade("window statistics of a trace at low load must match the figures worked by hand",
       "windows", timeout=10)
def test_low_load_stats(impl):
    # Window 0: batches 0 and 1 run 12 + 2 ms in it; window 100: batches 1 and 2, 10 + 14.
    same(impl.window_stats(LOW_LOAD, 100), {
        0.0: {"requests": 2, "utilisation": 0.14, "batch_size_mean": 1,
              "linger_p50": 38, "linger_p99": 38, "queue_p50": 0, "queue_p99": 0,
              "run_p50": 12, "run_p99": 12, "e2e_p50": 50, "e2e_p99": 50},
        100.0: {"requests": 2, "utilisation": 0.24, "batch_size_mean": 2,
                "linger_p50": 31, "linger_p99": 26 + 0.99 * 10, "queue_p50": 0, "queue_p99": 0,
                "run_p50": 14, "run_p99": 14, "e2e_p50": 45, "e2e_p99": 40 + 0.99 * 10},
    })


@grade("the tail of a trace at low load must be blamed on linger", "attribution", timeout=10)
def test_low_load_tail(impl):
    # Window 0: both requests have e2e 50 = p99, so both are the tail.
    same(impl.attribute_tail(LOW_LOAD, 100), {
        0.0: {"e2e_p99": 50, "tail": 2, "linger": 38, "queue": 0, "run": 12, "cause": "linger"},
        100.0: {"e2e_p99": 49.9, "tail": 1, "linger": 36, "queue": 0, "run": 14,
                "cause": "linger"},
    })


@grade("window statistics of a trace of big batches must match the figures worked by hand",
       "windows", timeout=10)
def test_big_batches_stats(impl):
    # Each window holds one batch of four, arriving 4, 3, 2 and 1 ms before its dispatch.
    row = {"requests": 4, "utilisation": 36 / 50, "batch_size_mean": 4,
           "linger_p50": 2.5, "linger_p99": 3 + 0.97 * 1, "queue_p50": 0, "queue_p99": 0,
           "run_p50": 36, "run_p99": 36, "e2e_p50": 38.5, "e2e_p99": 39 + 0.97 * 1}
    same(impl.window_stats(BIG_BATCHES, 50), {0.0: row, 50.0: row})


@grade("the tail of a trace of big batches must be blamed on run", "attribution", timeout=10)
def test_big_batches_tail(impl):
    row = {"e2e_p99": 39.97, "tail": 1, "linger": 4, "queue": 0, "run": 36, "cause": "run"}
    same(impl.attribute_tail(BIG_BATCHES, 50), {0.0: row, 50.0: row})


@grade("window statistics of a trace with a straggler must match the figures worked by hand",
       "windows", timeout=10)
def test_straggler_stats(impl):
    # Window 100: request 3 belongs to batch 1, of size 2 over the whole trace.
    same(impl.window_stats(STRAGGLER, 100), {
        0.0: {"requests": 3, "utilisation": 0.14, "batch_size_mean": 2,
              "linger_p50": 30, "linger_p99": 30 + 0.98 * 5, "queue_p50": 0, "queue_p99": 0,
              "run_p50": 14, "run_p99": 14 + 0.98 * 156, "e2e_p50": 44,
              "e2e_p99": 44 + 0.98 * 161},
        100.0: {"requests": 2, "utilisation": 0.7, "batch_size_mean": 1.5,
                "linger_p50": 87.5, "linger_p99": 25 + 0.99 * 125, "queue_p50": 0,
                "queue_p99": 0, "run_p50": 91, "run_p99": 12 + 0.99 * 158, "e2e_p50": 178.5,
                "e2e_p99": 162 + 0.99 * 33},
    })


@grade("the tail of a trace with a straggler must be blamed on run", "attribution", timeout=10)
def test_straggler_tail(impl):
    same(impl.attribute_tail(STRAGGLER, 100), {
        0.0: {"e2e_p99": 44 + 0.98 * 161, "tail": 1, "linger": 35, "queue": 0, "run": 170,
              "cause": "run"},
        100.0: {"e2e_p99": 162 + 0.99 * 33, "tail": 1, "linger": 25, "queue": 0, "run": 170,
                "cause": "run"},
    })


@grade("window statistics of a queueing trace must match the figures worked by hand",
       "windows", timeout=10)
def test_queueing_stats(impl):
    # Window 0: 40 + 40 + 4 busy ms over 2 workers x 50; window 50: 6 + 10.
    same(impl.window_stats(QUEUEING, 50), {
        0.0: {"requests": 6, "utilisation": 0.84, "batch_size_mean": 2,
              "linger_p50": 3, "linger_p99": 5, "queue_p50": 0, "queue_p99": 31,
              "run_p50": 40, "run_p99": 40, "e2e_p50": 43.5, "e2e_p99": 45.95},
        50.0: {"requests": 1, "utilisation": 0.16, "batch_size_mean": 1,
               "linger_p50": 2, "linger_p99": 2, "queue_p50": 0, "queue_p99": 0,
               "run_p50": 10, "run_p99": 10, "e2e_p50": 12, "e2e_p99": 12},
    })


@grade("the tail of a queueing trace must be blamed on queue", "attribution", timeout=10)
def test_queueing_tail(impl):
    same(impl.attribute_tail(QUEUEING, 50), {
        0.0: {"e2e_p99": 45.95, "tail": 1, "linger": 5, "queue": 31, "run": 10,
              "cause": "queue"},
        50.0: {"e2e_p99": 12, "tail": 1, "linger": 2, "queue": 0, "run": 10, "cause": "run"},
    })


@grade("a request arriving on a window boundary must belong to the window it opens",
       "windows", timeout=10)
def test_boundary_arrival(impl):
    trace = frame([(0, 0, 0, 0, 1, 0, "g"), (1, 10, 10, 10, 11, 1, "g"),
                   (2, 20, 20, 20, 21, 2, "g")])
    got = impl.window_stats(trace, 10)
    assert [float(k) for k in got.index] == [0, 10, 20]
    assert list(got["requests"]) == [1, 1, 1]


@grade("windows without an arrival must not be listed", "windows", timeout=10)
def test_empty_windows_left_out(impl):
    trace = frame([(0, 0, 5, 5, 8, 0, "g"), (1, 250, 260, 260, 270, 1, "g")])
    assert [float(k) for k in impl.window_stats(trace, 100).index] == [0, 200]
    assert [float(k) for k in impl.attribute_tail(trace, 100).index] == [0, 200]


@grade("the tail must be decided by its own requests, not by each component's p99",
       "attribution", timeout=10)
def test_tail_by_its_requests(impl):
    # e2e 40, 35, 30: the tail is request 0 alone, which lingered 22 and ran 18. The parts'
    # own p99s (linger 21.56, run 34.9) would blame run.
    trace = frame([(0, 0, 22, 22, 40, 0, "g0"), (1, 0, 0, 0, 35, 1, "g1"),
                   (2, 0, 0, 0, 30, 2, "g2")])
    got = impl.attribute_tail(trace, 100)
    assert got.loc[0, "cause"] == "linger" and got.loc[0, "tail"] == 1


@pytest.mark.parametrize("rows, cause", [
    ([(0, 0, 10, 10, 20, 0, "g")], "linger"),  # linger 10 = run 10
    ([(0, 0, 0, 5, 10, 0, "g")], "queue"),  # queue 5 = run 5
    ([(0, 0, 4, 8, 12, 0, "g")], "linger"),  # all three 4
], ids=["linger_run", "queue_run", "all_three"])
@grade("a tie between causes must go to linger, then queue, then run", "attribution",
       timeout=10)
def test_cause_ties(impl, rows, cause):
    assert impl.attribute_tail(frame(rows), 100).loc[0, "cause"] == cause


@grade("a request whose e2e equals the p99, below the maximum, must be in the tail",
       "attribution", timeout=10)
def test_tail_includes_p99_below_max(impl):
    # 101 distinct e2e values 1..101 in one window: the p99 is 100 itself, so the tail is two.
    trace = frame([(i, i / 2, i / 2, i / 2, i / 2 + i + 1, i, "g0") for i in range(101)])
    same(impl.attribute_tail(trace, 100), {
        0.0: {"e2e_p99": 100, "tail": 2, "linger": 0, "queue": 0, "run": 100.5, "cause": "run"},
    })


@grade("the caller's trace must not be modified", "errors", timeout=10)
def test_trace_untouched(impl):
    # Each function alone, on fresh frames (a file that writes into its input has written
    # into QUEUEING by now), with and without a column of the caller's own.
    for trace in (frame(QUEUEING_ROWS), frame(QUEUEING_ROWS).assign(note="x")):
        for function in (impl.window_stats, impl.attribute_tail):
            before = trace.copy()
            function(trace, 50)
            pd.testing.assert_frame_equal(trace, before)


@grade("extra columns must not change the result", "windows", timeout=10)
def test_extra_columns_ignored(impl):
    extra = QUEUEING.assign(tokens=range(len(QUEUEING)), note="x")
    pd.testing.assert_frame_equal(impl.window_stats(extra, 50), impl.window_stats(QUEUEING, 50))
    pd.testing.assert_frame_equal(impl.attribute_tail(extra, 50),
                                  impl.attribute_tail(QUEUEING, 50))


@grade("an empty trace must give an empty frame", "errors", timeout=10)
def test_empty_trace(impl):
    assert len(impl.window_stats(QUEUEING.iloc[:0], 50)) == 0
    assert len(impl.attribute_tail(QUEUEING.iloc[:0], 50)) == 0


def changed(column: str, row: int, value) -> pd.DataFrame:
    trace = QUEUEING.copy()
    trace[column] = trace[column].astype(object if isinstance(value, str) else float)
    trace.loc[row, column] = value
    return trace


BAD_TRACES = {
    "missing_worker": QUEUEING.drop(columns="worker"),
    "missing_end": QUEUEING.drop(columns="end"),
    "missing_request_id": QUEUEING.drop(columns="request_id"),
    "text_arrival": QUEUEING.assign(arrival=QUEUEING.arrival.astype(str)),
    "nan_end": changed("end", 6, math.nan),
    "inf_end": changed("end", 6, math.inf),
    "minus_inf_arrival": changed("arrival", 6, -math.inf),
    "arrival_after_dispatch": changed("arrival", 6, 63),
    "dispatch_after_start": QUEUEING.assign(dispatch=[5, 5, 6, 6, 50, 50, 62]),
    "start_after_end": QUEUEING.assign(start=[5, 5, 6, 6, 46, 46, 80]),
    "repeated_id": QUEUEING.assign(request_id=[0, 1, 2, 3, 4, 4, 6]),
    "batch_dispatch_differs": changed("dispatch", 5, 16),
    "batch_start_differs": changed("start", 5, 47),
    "batch_end_differs": changed("end", 5, 57),
    "batch_worker_differs": changed("worker", 5, "g0"),
}


@pytest.mark.parametrize("name", list(BAD_TRACES))
@pytest.mark.parametrize("function", ["window_stats", "attribute_tail"])
@grade("a malformed trace must raise ValueError", "errors", timeout=10)
def test_bad_trace(impl, function, name):
    with pytest.raises(ValueError):
        getattr(impl, function)(BAD_TRACES[name], 50)


@pytest.mark.parametrize("window", [0, -50, math.nan, math.inf, "50", None])
@pytest.mark.parametrize("function", ["window_stats", "attribute_tail"])
@grade("a window_ms that is not a finite number above 0 must raise ValueError", "errors",
       timeout=10)
def test_bad_window(impl, function, window):
    with pytest.raises(ValueError):
        getattr(impl, function)(QUEUEING, window)


# Properties over random traces (times in halves), against a plain recount.

@grade("window statistics must match a plain recount of the trace", "windows", timeout=30)
@settings(max_examples=40)
@given(traces(), windows)
def test_stats_match_recount(impl, trace, w):
    same(impl.window_stats(trace, w), stats(trace, w))


@grade("tail attribution must match a plain recount of the trace", "attribution", timeout=30)
@settings(max_examples=40)
@given(traces(), windows)
def test_tails_match_recount(impl, trace, w):
    same(impl.attribute_tail(trace, w), tails(trace, w))


@grade("row order and extra columns must change no output", "windows", timeout=30)
@settings(max_examples=25)
@given(traces(), windows, st.randoms(use_true_random=False))
def test_row_order_and_extra_columns(impl, trace, w, rng):
    order = rng.sample(range(len(trace)), len(trace))
    shuffled = trace.iloc[order].assign(note="x", size=np.arange(len(trace)) % 3)
    for function in (impl.window_stats, impl.attribute_tail):
        pd.testing.assert_frame_equal(function(shuffled, w), function(trace, w))


@grade("utilisation must stay within 0 and 1 when no worker overlaps itself", "utilisation",
       timeout=30)
@settings(max_examples=40)
@given(traces(overlapping=False), windows)
def test_utilisation_bounded(impl, trace, w):
    utilisation = impl.window_stats(trace, w)["utilisation"]
    assert ((utilisation >= 0) & (utilisation <= 1 + 1e-9)).all()


@grade("requests must add up to the rows of the trace", "windows", timeout=30)
@settings(max_examples=40)
@given(traces(), windows)
def test_requests_add_up(impl, trace, w):
    assert impl.window_stats(trace, w)["requests"].sum() == len(trace)


@grade("every window's tail must hold at least one request", "attribution", timeout=30)
@settings(max_examples=40)
@given(traces(), windows)
def test_tail_not_empty(impl, trace, w):
    assert (impl.attribute_tail(trace, w)["tail"] >= 1).all()
