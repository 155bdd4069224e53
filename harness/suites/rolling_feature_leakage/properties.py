"""The point-in-time properties, shared by count windows (Level 1) and time windows (Level 2):
each takes the strategy of (df, window, min_periods) cases to check them over."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from .oracle import (
    assert_frames_close,
    clean_values,
    expected,
    features,
    first_call,
    later_rows_changed,
)


def matches_definition(impl, cases) -> None:
    first_call(impl)

    @settings(max_examples=60)
    @given(cases)
    def check(case):
        df, window, min_periods = case
        assert_frames_close(features(impl, df, window, min_periods=min_periods),
                            expected(df, window, min_periods=min_periods))
    check()


def point_in_time(impl, cases) -> None:
    """Every row's features equal those computed from only the rows up to its time."""
    first_call(impl)

    @settings(max_examples=25)
    @given(cases)
    def check(case):
        df, window, min_periods = case
        full = features(impl, df, window, min_periods=min_periods)
        for t in df["time"].unique():
            now = df.index[df["time"] == t]
            past = features(impl, df[df["time"] <= t], window, min_periods=min_periods)
            assert_frames_close(past.loc[now], full.loc[now])
    check()


def later_rows_do_not_matter(impl, cases) -> None:
    """Changing or deleting rows after a cut never changes a feature at or before it."""
    first_call(impl)

    @settings(max_examples=40)
    @given(cases, st.data())
    def check(case, data):
        df, window, min_periods = case
        cut = data.draw(st.sampled_from(sorted(df["time"].unique())))
        new = data.draw(st.lists(clean_values, min_size=len(df), max_size=len(df)))
        keep = data.draw(st.lists(st.booleans(), min_size=1, max_size=len(df)))
        changed = later_rows_changed(df, cut, new, keep)
        now = df.index[df["time"] <= cut]
        assert_frames_close(features(impl, changed, window, min_periods=min_periods).loc[now],
                            features(impl, df, window, min_periods=min_periods).loc[now])
    check()
