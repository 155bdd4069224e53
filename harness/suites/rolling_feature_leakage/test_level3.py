"""Level 3: find_leaky_columns, a detector for feature pipelines that look into the future."""

import numpy as np
import pandas as pd
import pytest

from harness.marks import level

from .pipelines import CLEAN, KEYS, LEAKY, event_log, own_value, point_in_time_mean

grade = level(3)


DF = event_log()

# Which part of the method each leak needs: rows at the cut perturbed and compared ("cut"),
# rows deleted ("drop"), or just a look at the past after changing the future ("detect").
LEAK_HINTS = {
    "a rolling mean that includes the row itself": "cut",
    "shift(1) that lets same-timestamp rows see each other": "cut",
    "a copy of the row's own target": "cut",
    "a time window closed on the right": "cut",
    "the time until the entity's next event": "drop",
    "the entity's total row count": "drop",
    "the leaky columns of a mixed pipeline": "output",
}


def detect(impl, pipeline, df=DF, **kw):
    return impl.find_leaky_columns(pipeline, df, time="time", keys=KEYS, **kw)


@pytest.mark.parametrize(
    "pipeline, leaky",
    [pytest.param(fn, leaky, id=fn.__name__,
                  marks=grade(f"{name} must be flagged", LEAK_HINTS.get(name, "detect"),
                              timeout=20))
     for name, fn, leaky in LEAKY])
def test_flags_leaky_pipeline(impl, pipeline, leaky):
    assert detect(impl, pipeline) == leaky


@pytest.mark.parametrize(
    "pipeline",
    [pytest.param(fn, id=fn.__name__, marks=grade(f"{name} must not be flagged", "clean",
                                                  timeout=20))
     for name, fn in CLEAN])
def test_leaves_clean_pipeline(impl, pipeline):
    assert detect(impl, pipeline) == []


@grade("the detector must work whatever the time column is called, arguments given by name",
       "detect", timeout=20)
def test_renamed_time_column(impl):
    # "date" sorts before the other columns, and a name built at run time is a new str object.
    name = "".join(["da", "te"])
    df = DF.rename(columns={"time": "date"})

    def renamed(pipeline):
        return lambda d: pipeline(d.rename(columns={"date": "time"}))

    for pipeline, leaky in ((own_value, ["label"]), (point_in_time_mean, [])):
        assert impl.find_leaky_columns(build_features=renamed(pipeline), df=df, time=name,
                                       keys=KEYS) == leaky


@grade("the same seed must give the same result, whatever the global random state", "seed",
       timeout=20)
def test_deterministic(impl):
    def run():
        seen = []

        def recording(df):
            seen.append(int(pd.util.hash_pandas_object(df).sum()))
            return point_in_time_mean(df)
        return detect(impl, recording, seed=5), seen

    np.random.seed(1)
    first = run()
    np.random.seed(2)
    assert run() == first


@grade("a missing time column must raise ValueError", "errors", timeout=10)
def test_missing_time(impl):
    with pytest.raises(ValueError):
        impl.find_leaky_columns(own_value, DF, time="when", keys=KEYS)


@grade("a missing key column must raise ValueError", "errors", timeout=10)
def test_missing_key(impl):
    with pytest.raises(ValueError):
        impl.find_leaky_columns(own_value, DF, time="time", keys=("entity", "country"))


BAD_OUTPUT = [
    ("one row fewer", lambda df: own_value(df).iloc[1:]),
    ("a reset index", lambda df: own_value(df).reset_index(drop=True)),
    ("an extra row", lambda df: pd.concat([own_value(df),
                                           pd.DataFrame({"label": [0]}, index=[-1])])),
]


@pytest.mark.parametrize(
    "pipeline",
    [pytest.param(fn, id=what, marks=grade(f"a pipeline returning {what} must raise ValueError",
                                           "errors", timeout=10))
     for what, fn in BAD_OUTPUT])
def test_different_index_labels(impl, pipeline):
    with pytest.raises(ValueError):
        detect(impl, pipeline)


@grade("the detector must not modify df", "inputs", timeout=20)
def test_df_untouched(impl):
    df = DF.copy()
    detect(impl, own_value, df=df)
    pd.testing.assert_frame_equal(df, DF)
