"""Visible examples. `pytest katas/rolling_feature_leakage` also runs the hidden suite."""

import math

import pandas as pd
import pytest

DAYS = pd.to_datetime(["2024-01-01", "2024-01-02", "2024-01-02", "2024-01-03", "2024-01-05"])
EVENTS = pd.DataFrame({"user": ["a", "a", "a", "a", "a"], "time": DAYS,
                       "amount": [10.0, 20.0, 30.0, 40.0, 50.0]})


def test_example_from_the_prompt(impl):
    out = impl.rolling_features(EVENTS, entity="user", time="time", value="amount", window=2)
    assert list(out.columns) == ["amount_mean_2", "amount_std_2", "amount_min_2", "amount_max_2"]
    assert list(out.index) == list(EVENTS.index)
    # Rows 1 and 2 share a timestamp: neither sees the other, both see only row 0.
    means = out["amount_mean_2"].tolist()
    assert math.isnan(means[0]) and means[1:] == [10.0, 10.0, 25.0, 35.0]


def test_time_window(impl):
    out = impl.rolling_features(EVENTS, entity="user", time="time", value="amount",
                                window="2D", stats=("max", "mean"))
    assert list(out.columns) == ["amount_max_2D", "amount_mean_2D"]
    # 2024-01-05 looks back to [01-03, 01-05): only the row of 01-03.
    assert out["amount_max_2D"].tolist()[1:] == [10.0, 10.0, 30.0, 40.0]


def test_calendar_window_is_rejected(impl):
    with pytest.raises(ValueError):
        impl.rolling_features(EVENTS, entity="user", time="time", value="amount", window="1ME")


def test_detector(impl):
    def leaky(df):  # a centered window looks one row into the future
        return pd.DataFrame({"centered": df["amount"].rolling(3, center=True).mean()})

    def clean(df):  # the row's own time is allowed
        return pd.DataFrame({"weekday": df["time"].dt.day_of_week})

    def both(df):
        return pd.concat([clean(df), leaky(df)], axis=1)

    df = pd.DataFrame({"time": pd.date_range("2024-01-01", periods=30, freq="D"),
                       "amount": [float(i % 7) for i in range(30)]})
    assert impl.find_leaky_columns(both, df, time="time") == ["centered"]
    assert impl.find_leaky_columns(clean, df, time="time") == []
